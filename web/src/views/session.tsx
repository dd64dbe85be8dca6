/** One agent session: what it runs and where, its status live, ending it, and its terminal. */
import { useEffect, useState } from "preact/hooks";
import { linkProps } from "../router";
import { useSession } from "../session-store";
import type { StatusChange } from "../terminal-link";
import { Problem } from "./controls";
import { lazy } from "./lazy";
import { ProjectTabs } from "./project-tabs";
import { agentLabel } from "../agent-types";
import { McpStatusBadge, SessionControls, SessionStatusBadge } from "./session-controls";
import { SessionConnect } from "./session-connect";
import { WorkingTree } from "./working-tree";
import { absoluteTime } from "../time-format";

/** xterm.js loads only when a terminal is opened. */
const LazyTerminal = lazy(() => import("./terminal").then((m) => m.SessionTerminal), "the terminal");
/** So do the session's files. */
const LazyFiles = lazy(() => import("./session-files").then((m) => m.SessionFiles), "the session's files");

export function SessionPage({ projectId, sessionId }: { projectId: string; sessionId: string }) {
  const state = useSession(projectId, sessionId);
  // The status as last told, by the session's events or by its terminal, whichever spoke last.
  const [told, setTold] = useState<StatusChange | null>(null);
  useEffect(() => setTold(null), [sessionId]);
  useEffect(() => {
    if (state.session) setTold({ status: state.session.status, exit_code: state.session.exit_code, error: state.session.error });
  }, [state.session]);
  const session =
    state.session && told
      ? { ...state.session, status: told.status, exit_code: told.exit_code ?? state.session.exit_code, error: told.error ?? state.session.error }
      : state.session;

  return (
    <section class="session-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="session" status={state.status} />
      <p>
        <a {...linkProps(`/projects/${projectId}/sessions`)}>← Sessions</a>
      </p>
      <Problem message={state.error} />
      {session && (
        <header class="session-head">
          <h2>
            {session.name} <SessionStatusBadge session={session} /> <McpStatusBadge status={session.mcp_status} />
          </h2>
          <p class="meta">
            on <strong>{session.server_name}</strong> · {agentLabel(session.agent_type)} · {session.role}
            {session.working_directory && (
              <>
                {" "}
                · <code>{session.working_directory}</code>
              </>
            )}
            {session.pid !== null && ` · pid ${session.pid}`} · started <time dateTime={session.created_at}>{absoluteTime(session.created_at)}</time>
          </p>
          {session.status === "error" && session.error && <p class="problem">{session.error}</p>}
          <div class="session-actions">
            <SessionControls session={session} onChanged={state.reread} />
            <SessionConnect session={session} />
          </div>
        </header>
      )}
      {session && <LazyFiles projectId={projectId} sessionId={sessionId} events={state.files} />}
      <WorkingTree projectId={projectId} sessionId={sessionId} root={session?.working_directory ?? null}>
        <LazyTerminal key={sessionId} projectId={projectId} sessionId={sessionId} label={`Terminal of ${session?.name ?? "the session"}`} onStatus={setTold} />
      </WorkingTree>
    </section>
  );
}
