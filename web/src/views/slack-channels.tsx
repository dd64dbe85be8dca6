/**
 * A project's Slack channels, in its settings: adding one with the groups of events it wants, muting and removing
 * them. Members who may change the project (and admins) do; viewers read the list.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { CHAT_EVENT_GROUPS, eventsOf, GROUP_LABELS, GROUPS, groupsOf, type ChatEventGroup } from "../chat-event-groups";
import { useCanWrite } from "../me";
import type { SlackChannel } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";

type Listed = { channels: SlackChannel[]; workspaces: { team_id: string; team_name: string | null }[] };

export function SlackChannelsPanel({ projectId }: { projectId: string }) {
  const canWrite = useCanWrite();
  const [listed, setListed] = useState<Listed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const path = { params: { path: { id: projectId } } };
  const load = () =>
    ok(hub.GET("/api/v1/projects/{id}/slack-channels", path)).then(
      (r) => (setListed(r), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => void load(), [projectId]);
  return (
    <section class="panel slack-channels" aria-labelledby="slack-channels-title">
      <h2 id="slack-channels-title">Slack channels</h2>
      <p class="muted">
        Questions, plans, failures and more, posted in Slack channels with buttons to answer them. Invite the app to a private channel first (
        <code>/invite @Orchestratia</code>); it joins a public one itself.
      </p>
      {!listed ? (
        error ? (
          <Failed what="the Slack channels" message={error} retry={() => void load()} />
        ) : (
          <Loading what="Slack channels" />
        )
      ) : (
        <>
          {canWrite && listed.workspaces.length > 0 && <AddChannel projectId={projectId} workspaces={listed.workspaces} onAdded={() => void load()} />}
          {listed.workspaces.length === 0 && (
            <p class="muted" data-slack-not-installed>
              The Slack app is not installed yet: an admin installs it in Slack settings.
            </p>
          )}
          {listed.channels.length === 0 ? (
            <Empty title="No Slack channels yet.">{canWrite ? "Add one above." : "Members of the project add them."}</Empty>
          ) : (
            <ChannelTable projectId={projectId} rows={listed.channels} workspaces={listed.workspaces} canWrite={canWrite} onChanged={load} />
          )}
          {!canWrite && (
            <p class="muted small" data-read-only>
              Read-only: a project's channels are set up by its members and admins.
            </p>
          )}
        </>
      )}
    </section>
  );
}

const FIELDS = ["channel_id", "team_id", "events"] as const;
type Field = (typeof FIELDS)[number];

function AddChannel({ projectId, workspaces, onAdded }: { projectId: string; workspaces: Listed["workspaces"]; onAdded: () => void }) {
  const [channelId, setChannelId] = useState("");
  const [teamId, setTeamId] = useState(workspaces[0]!.team_id);
  const [groups, setGroups] = useState<ChatEventGroup[]>(["questions", "plans", "failures"]);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal<Field> | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await ok(
        hub.POST("/api/v1/projects/{id}/slack-channels", {
          params: { path: { id: projectId } },
          body: { channel_id: channelId.trim(), ...(workspaces.length > 1 ? { team_id: teamId } : {}), events: eventsOf(groups) },
        }),
      );
      setChannelId("");
      toast(`Posting in ${channelId.trim()}.`);
      onAdded();
    } catch (err) {
      setRefusal(refusalOf(err, FIELDS));
    } finally {
      setBusy(false);
    }
  };
  const toggle = (g: ChatEventGroup, on: boolean) => setGroups(GROUPS.filter((x) => (x === g ? on : groups.includes(x))));
  return (
    <form class="form-row add-slack-channel" onSubmit={(e) => void submit(e)}>
      <label>
        Channel id
        <input
          name="channel-id"
          required
          placeholder="C0123ABCD"
          autoComplete="off"
          spellcheck={false}
          value={channelId}
          onInput={(e) => setChannelId(e.currentTarget.value)}
        />
        <FieldProblem field="channel_id" message={refusal?.fields.channel_id} />
      </label>
      {workspaces.length > 1 && (
        <label>
          Workspace
          <select name="team-id" value={teamId} onChange={(e) => setTeamId(e.currentTarget.value)}>
            {workspaces.map((w) => (
              <option key={w.team_id} value={w.team_id}>
                {w.team_name ?? w.team_id}
              </option>
            ))}
          </select>
          <FieldProblem field="team_id" message={refusal?.fields.team_id} />
        </label>
      )}
      <fieldset class="event-groups">
        <legend>Post</legend>
        {GROUPS.map((g) => (
          <label key={g} title={CHAT_EVENT_GROUPS[g].join(", ")}>
            <input type="checkbox" name="event-group" value={g} checked={groups.includes(g)} onChange={(e) => toggle(g, e.currentTarget.checked)} />{" "}
            {GROUP_LABELS[g]}
          </label>
        ))}
        <FieldProblem field="events" message={refusal?.fields.events ?? (groups.length === 0 ? "pick at least one" : undefined)} />
      </fieldset>
      <button type="submit" disabled={busy || groups.length === 0} aria-busy={busy}>
        Add channel
      </button>
      {refusal?.other && (
        <p class="problem" role="alert">
          {refusal.other}
        </p>
      )}
      <p class="muted small">The channel id is at the foot of the channel's details in Slack (click its name).</p>
    </form>
  );
}

function ChannelTable(props: {
  projectId: string;
  rows: SlackChannel[];
  workspaces: Listed["workspaces"];
  canWrite: boolean;
  onChanged: () => Promise<unknown>;
}) {
  const { run, busy, problem } = useAction();
  // While a mute is on its way the switch shows where it goes; a refusal puts it back.
  const [muting, setMuting] = useState<{ id: string; muted: boolean } | null>(null);
  const params = (c: SlackChannel) => ({ params: { path: { id: props.projectId, cid: c.id } } });
  const mute = (c: SlackChannel, muted: boolean) => {
    setMuting({ id: c.id, muted });
    return run(`mute:${c.id}`, async () => {
      await ok(hub.PATCH("/api/v1/projects/{id}/slack-channels/{cid}", { ...params(c), body: { muted } }));
      toast(muted ? `Muted ${c.channel_id}.` : `Posting in ${c.channel_id} again.`);
      await props.onChanged();
    }).finally(() => setMuting(null));
  };
  const mutedOf = (c: SlackChannel) => (muting?.id === c.id ? muting.muted : c.muted);
  const remove = (c: SlackChannel) =>
    confirm(`Stop posting in ${c.channel_id}? What was posted stays in Slack.`) &&
    void run(`remove:${c.id}`, async () => {
      await ok(hub.DELETE("/api/v1/projects/{id}/slack-channels/{cid}", params(c)));
      toast(`Stopped posting in ${c.channel_id}.`);
      await props.onChanged();
    });
  const workspace = (teamId: string) => props.workspaces.find((w) => w.team_id === teamId)?.team_name ?? teamId;
  return (
    <DataTable
      class="slack-channel-list"
      label="Slack channels"
      rows={props.rows}
      rowKey={(c) => c.id}
      rowAttributes={(c) => ({ "data-channel-id": c.channel_id, "data-muted": String(c.muted) })}
      columns={[
        { label: "Channel", rowHeader: true, cell: (c) => <code>{c.channel_id}</code> },
        props.workspaces.length > 1 && { label: "Workspace", cell: (c) => workspace(c.team_id) },
        {
          label: "Posts",
          cell: (c) =>
            c.events === null
              ? "everything"
              : groupsOf(c.events)
                  .map((g) => GROUP_LABELS[g].toLowerCase())
                  .join(", "),
        },
        {
          label: "Muted",
          cell: (c) => (
            <label class="switch">
              <input
                type="checkbox"
                name="muted"
                checked={mutedOf(c)}
                disabled={!props.canWrite || busy !== null}
                aria-busy={muting?.id === c.id}
                onChange={(e) => void mute(c, e.currentTarget.checked)}
                aria-label={`Mute ${c.channel_id}`}
              />
              {mutedOf(c) ? "muted" : "posting"}
              {problem(`mute:${c.id}`)}
            </label>
          ),
        },
        props.canWrite && {
          label: "Actions",
          actions: true,
          cell: (c) => (
            <span class="action">
              <button type="button" class="danger" disabled={busy !== null} onClick={() => remove(c)}>
                Remove
              </button>
              {problem(`remove:${c.id}`)}
            </span>
          ),
        },
      ]}
    />
  );
}
