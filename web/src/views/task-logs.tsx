/** What agents logged about a task over their sockets (event:log lines naming it, event:error reports), newest first. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { AgentLog } from "../types";
import { json, Section } from "./task-sections";
import { absoluteTime } from "../time-format";

const PAGE = 50;

export function AgentLogs({ taskId }: { taskId: string }) {
  const [logs, setLogs] = useState<AgentLog[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  // Logs make no event, so the panel reads them when opened and when asked to.
  const [reads, setReads] = useState(0);
  const read = async (cursor?: string) => {
    try {
      const page = await ok(hub.GET("/api/v1/tasks/{id}/logs", { params: { path: { id: taskId }, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } } }));
      setLogs((shown) => (cursor ? [...shown, ...page.logs] : page.logs));
      setNext(page.next_cursor);
      setProblem(null);
    } catch (e) {
      setProblem((e as Error).message);
    }
  };
  useEffect(() => {
    setLogs([]);
    void read();
  }, [taskId, reads]);
  return (
    <Section title="Agent logs">
      {problem && <p class="problem">{problem}</p>}
      {logs.length === 0 ? (
        <p class="muted">No agent has logged anything about this task.</p>
      ) : (
        <ol class="agent-logs">
          {logs.map((l) => (
            <li key={l.id} class={`log-${l.level}`}>
              <time dateTime={l.created_at}>{absoluteTime(l.created_at)}</time> <span class={`badge level level-${l.level}`}>{l.level}</span>{" "}
              <span class="muted">{l.server_name ?? l.server_id.slice(0, 8)}</span> <span class="log-message">{l.message}</span>
              {l.context != null && (
                <details>
                  <summary>Context</summary>
                  <pre class="json">{json(l.context)}</pre>
                </details>
              )}
            </li>
          ))}
        </ol>
      )}
      <p class="inline">
        <button type="button" onClick={() => setReads((n) => n + 1)}>
          Refresh logs
        </button>{" "}
        {next && (
          <button type="button" onClick={() => void read(next)}>
            Older lines
          </button>
        )}
      </p>
    </Section>
  );
}
