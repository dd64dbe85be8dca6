/**
 * Slack for the hub (admins): the app's manifest to create it from, installing it in a workspace (Slack's install
 * page, or a pasted bot token), and the workspaces it is installed in. Slack's install page sends the admin back here
 * with `?installed=<team>` or `?error=<why>`.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import { linkProps } from "../router";
import type { SlackInstallation } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { absoluteTime } from "../time-format";
import { useAction } from "./controls";
import { CopyButton } from "./copy";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";

type Installed = { installations: SlackInstallation[]; oauth: boolean };

export function SlackSettings() {
  const me = useMe();
  const [installed, setInstalled] = useState<Installed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/slack/installations")).then(
      (r) => (setInstalled(r), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => void (me.role === "admin" && load()), []);
  const query = new URLSearchParams(location.search);

  if (me.role !== "admin")
    return (
      <section class="slack-settings">
        <h1>Slack</h1>
        <p class="read-only" data-read-only>
          Slack is set up by the hub's admins. Link your own Slack user on your <a {...linkProps("/account")}>account page</a>.
        </p>
      </section>
    );
  return (
    <section class="slack-settings">
      <h1>Slack</h1>
      <InstallNotice installed={query.get("installed")} error={query.get("error")} />
      <ManifestPanel />
      <section class="panel" aria-labelledby="slack-install-title">
        <h2 id="slack-install-title">Install the app</h2>
        {installed?.oauth && <InstallButton />}
        {installed && !installed.oauth && (
          <p class="muted">
            Installing from Slack's page needs the <code>SLACK_CLIENT_ID</code> and <code>SLACK_CLIENT_SECRET</code> secrets; meanwhile paste the app's bot
            token.
          </p>
        )}
        <TokenForm onInstalled={load} />
      </section>
      <section class="panel" aria-labelledby="slack-workspaces-title">
        <h2 id="slack-workspaces-title">Workspaces</h2>
        {!installed ? (
          error ? (
            <Failed what="the workspaces" message={error} retry={load} />
          ) : (
            <Loading what="workspaces" />
          )
        ) : installed.installations.length === 0 ? (
          <Empty title="Not installed in any workspace yet.">Install the app above; then projects can post to its channels.</Empty>
        ) : (
          <Workspaces rows={installed.installations} onRemoved={load} />
        )}
      </section>
    </section>
  );
}

/** What Slack's install page answered, when it sent the admin back here. */
function InstallNotice({ installed, error }: { installed: string | null; error: string | null }) {
  if (installed)
    return (
      <p class="notice" role="status" data-installed={installed}>
        The app is installed in workspace <code>{installed}</code>. Add it to a channel, then choose the channel in a project's settings.
      </p>
    );
  if (error)
    return (
      <p class="problem" role="alert" data-install-error={error}>
        Slack did not install the app: {error === "access_denied" ? "the install was cancelled on Slack's page" : <code>{error}</code>}.
      </p>
    );
  return null;
}

function ManifestPanel() {
  const [manifest, setManifest] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/slack/manifest")).then(
      (m) => (setManifest(JSON.stringify(m, null, 2)), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, []);
  const download = () => {
    const url = URL.createObjectURL(new Blob([manifest!], { type: "application/json" }));
    const a = Object.assign(document.createElement("a"), { href: url, download: "slack-app-manifest.json" });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <section class="panel" aria-labelledby="slack-manifest-title">
      <h2 id="slack-manifest-title">Create the app</h2>
      <ol class="steps">
        <li>
          Open{" "}
          <a href="https://api.slack.com/apps?new_app=1" target="_blank" rel="noopener noreferrer">
            api.slack.com/apps
          </a>
          , choose <strong>Create New App</strong> → <strong>From a manifest</strong> and the workspace.
        </li>
        <li>Paste this manifest (it carries this hub's addresses) and create the app.</li>
        <li>
          Copy its <strong>Signing Secret</strong> (Basic Information) into the hub's <code>SLACK_SIGNING_SECRET</code> secret; for the install button, its
          Client ID and Secret into <code>SLACK_CLIENT_ID</code> and <code>SLACK_CLIENT_SECRET</code>.
        </li>
      </ol>
      {!manifest && (error ? <Failed what="the manifest" message={error} retry={load} /> : <Loading what="the manifest" />)}
      {manifest && (
        <>
          <div class="actions-row">
            <CopyButton text={manifest} label="Copy manifest" />
            <button type="button" class="secondary" onClick={download}>
              Download
            </button>
          </div>
          <details class="manifest">
            <summary>Show the manifest</summary>
            <pre tabIndex={0} aria-label="The Slack app manifest">
              {manifest}
            </pre>
          </details>
        </>
      )}
    </section>
  );
}

function InstallButton() {
  const { run, busy, problem } = useAction();
  const begin = () =>
    run("install", async () => {
      const { url } = await ok(hub.POST("/api/v1/slack/install-url"));
      location.assign(url);
    });
  return (
    <div class="actions-row install-to-slack">
      <button type="button" disabled={busy !== null} aria-busy={busy !== null} onClick={() => void begin()}>
        Install to Slack
      </button>
      <span class="muted">Slack asks which workspace, then brings you back here.</span>
      {problem("install")}
    </div>
  );
}

const TOKEN_FIELDS = ["team_id", "bot_token"] as const;
type TokenField = (typeof TOKEN_FIELDS)[number];

function TokenForm({ onInstalled }: { onInstalled: () => void }) {
  const [teamId, setTeamId] = useState("");
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal<TokenField> | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      const saved = await ok(hub.POST("/api/v1/slack/installations", { body: { team_id: teamId.trim(), bot_token: token.trim() } }));
      setTeamId("");
      setToken("");
      toast(`Installed in ${saved.team_name ?? saved.team_id}.`);
      onInstalled();
    } catch (err) {
      setRefusal(refusalOf(err, TOKEN_FIELDS));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form-row token-install" onSubmit={(e) => void submit(e)}>
      <h3>Or paste the bot token</h3>
      <label>
        Workspace id
        <input
          name="team-id"
          required
          placeholder="T0123ABCD"
          autoComplete="off"
          spellcheck={false}
          value={teamId}
          onInput={(e) => setTeamId(e.currentTarget.value)}
        />
        <FieldProblem field="team_id" message={refusal?.fields.team_id} />
      </label>
      <label class="grow">
        Bot token
        <input
          name="bot-token"
          type="password"
          required
          placeholder="xoxb-…"
          autoComplete="off"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <FieldProblem field="bot_token" message={refusal?.fields.bot_token} />
      </label>
      <button type="submit" disabled={busy} aria-busy={busy}>
        Install
      </button>
      {refusal?.other && (
        <p class="problem" role="alert">
          {refusal.other}
        </p>
      )}
      <p class="muted small">
        The token is on the app's <strong>OAuth &amp; Permissions</strong> page after installing it there; the workspace id is in the workspace's address
        (app.slack.com/client/<strong>T…</strong>). The hub checks it with Slack and keeps it sealed.
      </p>
    </form>
  );
}

function Workspaces({ rows, onRemoved }: { rows: SlackInstallation[]; onRemoved: () => void }) {
  const { run, busy, problem } = useAction();
  const remove = (w: SlackInstallation) =>
    confirm(`Forget ${w.team_name ?? w.team_id}? Its channels get nothing until the app is installed again.`) &&
    void run(w.team_id, async () => {
      await ok(hub.DELETE("/api/v1/slack/installations/{team_id}", { params: { path: { team_id: w.team_id } } }));
      toast(`Forgot ${w.team_name ?? w.team_id}.`);
      onRemoved();
    });
  return (
    <DataTable
      class="slack-workspaces"
      label="Workspaces"
      rows={rows}
      rowKey={(w) => w.team_id}
      rowAttributes={(w) => ({ "data-team-id": w.team_id })}
      columns={[
        { label: "Workspace", rowHeader: true, cell: (w) => w.team_name ?? w.team_id },
        { label: "Id", cell: (w) => <code>{w.team_id}</code> },
        { label: "Installed", cell: (w) => `${w.source === "oauth" ? "from Slack" : "by token"}, ${absoluteTime(w.updated_at)}` },
        {
          label: "Actions",
          actions: true,
          cell: (w) => (
            <span class="action">
              <button type="button" class="danger" disabled={busy !== null} onClick={() => remove(w)}>
                Remove
              </button>
              {problem(w.team_id)}
            </span>
          ),
        },
      ]}
    />
  );
}
