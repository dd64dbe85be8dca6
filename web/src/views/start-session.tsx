/** Starting an agent session on one of the project's servers; its daemon opens the terminal. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { AGENTS, agentChosen, DETECTED, type Agent } from "../agent-types";
import type { Server, Session } from "../types";
import { useAction } from "./controls";

/** The agent chosen, or "" for the daemon to detect it. */
type AgentChoice = Agent["type"] | "";
/** How often presence is read again (servers beat every 30 s). */
const REFRESH_MS = 15_000;

interface Draft {
  server_id: string;
  name: string;
  working_directory: string;
  agent_type: AgentChoice;
  role: Session["role"];
}

const EMPTY: Draft = { server_id: "", name: "", working_directory: "", agent_type: "claude_code", role: "worker" };

/** What the orchestrator role does to the working directory, shown beside the role once it is chosen (its option names the file). */
function orchestratorNote(choice: AgentChoice) {
  const agent = agentChosen(choice);
  if (!agent.promptFile) return `As orchestrator, the agent gets the governance tools; the daemon writes no instructions file for ${agent.label}.`;
  return (
    `As orchestrator, the daemon appends a block of instructions to ${agent.promptFile} in the working directory (or replaces the block it ` +
    `wrote there before). That file is often tracked by git: the change shows up in the repository.`
  );
}

/** Admins are told which projects a server serves; others only see servers serving one of theirs. */
export const serves = (s: Server, projectId: string) => !s.revoked && (s.project_ids == null || s.project_ids.includes(projectId));

function serverLabel(s: Server) {
  if (s.status === "offline") return `${s.name} (offline)`;
  return `${s.name} (online, ${s.daemon_connected ? "daemon connected" : "daemon not connected"})`;
}

export function StartSession({ projectId, onStarted }: { projectId: string; onStarted: () => void }) {
  const [servers, setServers] = useState<Server[] | null>(null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const { run, busy, problem } = useAction();

  useEffect(() => {
    const load = () =>
      void ok(hub.GET("/api/v1/servers")).then(
        (r) => setServers(r.servers.filter((s) => serves(s, projectId))),
        () => undefined,
      );
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [projectId]);

  const promptFile = agentChosen(draft.agent_type).promptFile;
  const field = (key: keyof Draft) => (e: Event) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  const start = (e: Event) => {
    e.preventDefault();
    void run("start", async () => {
      await ok(
        hub.POST("/api/v1/projects/{id}/sessions", {
          params: { path: { id: projectId } },
          body: {
            server_id: draft.server_id,
            role: draft.role,
            ...(draft.name.trim() ? { name: draft.name.trim() } : {}),
            ...(draft.working_directory.trim() ? { working_directory: draft.working_directory.trim() } : {}),
            ...(draft.agent_type ? { agent_type: draft.agent_type } : {}),
          },
        }),
      );
      setDraft({ ...draft, name: "" });
      onStarted();
    });
  };

  return (
    <section class="start-session">
      <h2>Start a session</h2>
      <form class="inline" onSubmit={start}>
        <label>
          Server
          <select name="server" required value={draft.server_id} onChange={field("server_id")}>
            <option value="">{servers?.length === 0 ? "no server serves this project" : "choose a server"}</option>
            {servers?.map((s) => (
              <option key={s.id} value={s.id} disabled={s.status !== "online"}>
                {serverLabel(s)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name
          <input
            name="session-name"
            maxLength={100}
            pattern="[A-Za-z0-9][\w.\-]*"
            title="A letter or digit first, then letters, digits, '_', '.' or '-'"
            placeholder="optional"
            value={draft.name}
            onInput={field("name")}
          />
        </label>
        <label>
          Working directory
          <input
            name="working-directory"
            maxLength={4096}
            placeholder="the daemon's default"
            value={draft.working_directory}
            onInput={field("working_directory")}
          />
        </label>
        <label>
          Agent
          <select name="agent-type" value={draft.agent_type} onChange={field("agent_type")}>
            {AGENTS.map((a) => (
              <option key={a.type} value={a.type}>
                {a.label}
              </option>
            ))}
            <option value="">{DETECTED.label}</option>
          </select>
        </label>
        <label>
          Role
          <select name="role" value={draft.role} onChange={field("role")} aria-describedby={draft.role === "orchestrator" ? "orchestrator-note" : undefined}>
            <option value="worker">worker</option>
            <option value="orchestrator">{`orchestrator${promptFile ? ` (writes to ${promptFile})` : ""}`}</option>
          </select>
        </label>
        <button type="submit" disabled={busy !== null || !draft.server_id}>
          Start session
        </button>
        {problem("start")}
      </form>
      {draft.role === "orchestrator" && (
        <p id="orchestrator-note" class="role-note">
          {orchestratorNote(draft.agent_type)}
        </p>
      )}
    </section>
  );
}
