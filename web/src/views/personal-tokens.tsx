/**
 * The person's personal access tokens, on the account page: made here (shown once), listed with their scope,
 * projects, expiry and last use, and revoked.
 */
import { When } from "../ui/when";
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { IssuedPersonalToken, PersonalToken } from "../types";
import { useProjects } from "../project-names";
import { DataTable } from "../ui/data-table";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { TokenForm } from "./token-form";
import { TokenOnce } from "./token-once";

const readTokens = () => ok(hub.GET("/api/v1/auth/me/tokens")).then((r) => r.tokens);

export function PersonalTokensSection() {
  const [tokens, setTokens] = useState<PersonalToken[] | null>(null);
  const [issued, setIssued] = useState<IssuedPersonalToken | null>(null);
  // The table waits for the projects too, or a token's projects would read "no longer yours" for a moment.
  const projects = useProjects();
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void readTokens().then(
      (t) => (setTokens(t), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    load();
  }, []);
  const names = new Map((projects ?? []).map((p) => [p.id, p.name]));

  return (
    <section class="panel personal-tokens" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Personal access tokens</h2>
      <p class="muted">
        For clients that cannot sign in (an MCP client, an A2A agent, a script): send one as <code>Authorization: Bearer</code>. A token never does more than
        you may do at the time, nor more than its scope and projects allow.
      </p>
      {issued && <TokenOnce issued={issued} onDone={() => setIssued(null)} />}
      <TokenForm
        projects={projects ?? []}
        onMade={(t) => {
          setIssued(t);
          toast(`Token “${t.name}” made: copy it now, it is shown once.`);
          load();
        }}
      />
      {tokens === null || projects === null ? (
        error ? (
          <Failed what="your tokens" message={error} retry={load} />
        ) : (
          <Loading what="tokens" />
        )
      ) : tokens.length === 0 ? (
        <p class="muted">No tokens yet.</p>
      ) : (
        <DataTable
          class="tokens"
          label="Personal access tokens"
          rows={tokens}
          rowKey={(t) => t.id}
          rowAttributes={(t) => ({ "data-token": t.id })}
          columns={[
            { label: "Token", rowHeader: true, cell: (t) => t.name },
            { label: "Scope", cell: (t) => t.scope },
            { label: "Projects", cell: (t) => reach(t.project_ids, names) },
            {
              label: "Expires",
              cell: (t) =>
                Date.parse(t.expires_at) <= Date.now() ? (
                  <span class="problem">
                    expired <When iso={t.expires_at} />
                  </span>
                ) : (
                  <When iso={t.expires_at} />
                ),
            },
            { label: "Last used", cell: (t) => (t.last_used_at ? <When iso={t.last_used_at} /> : <span class="muted">not yet</span>) },
            { label: "Actions", actions: true, cell: (t) => <RevokeToken token={t} onRevoked={load} /> },
          ]}
        />
      )}
    </section>
  );
}

/** The projects a token reaches, by name; one the person no longer sees is counted, not named. */
function reach(ids: string[] | null, names: Map<string, string>) {
  if (!ids) return "all mine";
  const known = ids.flatMap((id) => names.get(id) ?? []);
  const gone = ids.length - known.length;
  return [...known, ...(gone ? [`${gone} no longer yours`] : [])].join(", ");
}

function RevokeToken({ token: t, onRevoked }: { token: PersonalToken; onRevoked: () => void }) {
  const { run, busy, problem } = useAction();
  const revoke = () =>
    run("revoke", async () => {
      await ok(hub.DELETE("/api/v1/auth/me/tokens/{id}", { params: { path: { id: t.id } } }));
      toast(`Revoked “${t.name}”.`);
      onRevoked();
    });
  return (
    <span class="action">
      <button
        type="button"
        class="danger"
        disabled={busy !== null}
        aria-busy={busy !== null}
        aria-label={`Revoke ${t.name}`}
        onClick={() => confirm(`Revoke “${t.name}”? Clients using it stop at once.`) && void revoke()}
      >
        Revoke
      </button>
      {problem("revoke")}
    </span>
  );
}
