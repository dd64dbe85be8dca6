/** A task's place among others: what it depends on (and the contracts it received), the tasks that depend on it, and the sessions that worked it. */
import { linkProps } from "../router";
import type { HubEvent, Task } from "../types";
import { json, Section } from "./task-sections";

const taskLink = (projectId: string, id: string, tasks: Map<string, Task>) => (
  <a {...linkProps(`/projects/${projectId}/tasks/${id}`)}>{tasks.get(id)?.title ?? id.slice(0, 8)}</a>
);
const statusBadge = (status: string) => <span class={`status status-${status}`}>{status.replace("_", " ")}</span>;

/** The tasks it depends on, each with its type, key and state; an input's contract as it was received. */
export function Dependencies({ task, tasks }: { task: Task; tasks: Map<string, Task> }) {
  if (task.dependencies.length === 0) return null;
  const inputs = task.resolved_inputs ?? {};
  return (
    <Section title="Dependencies">
      <ul class="dependency-list">
        {task.dependencies.map((d) => (
          <li key={d.depends_on_task_id} data-upstream={d.depends_on_task_id}>
            {taskLink(task.project_id, d.depends_on_task_id, tasks)} {statusBadge(d.depends_on_status)} <span class="badge">{d.dependency_type}</span>
            {d.contract_key && (
              <>
                {" "}
                <code>{d.contract_key}</code>
              </>
            )}{" "}
            — {d.resolved ? "resolved" : "unresolved"}
            {d.contract_key && d.resolved && d.contract_key in inputs && (
              <div class="contract received">
                <span class="label">Contract {d.contract_key} received</span>
                <pre class="json">{json(inputs[d.contract_key])}</pre>
              </div>
            )}
          </li>
        ))}
      </ul>
    </Section>
  );
}

/** The project's tasks that depend on this one: those it holds back, and those only related to it. */
export function Dependents({ task, tasks }: { task: Task; tasks: Map<string, Task> }) {
  const dependents = [...tasks.values()].flatMap((t) => t.dependencies.filter((d) => d.depends_on_task_id === task.id).map((d) => ({ t, d })));
  if (dependents.length === 0) return null;
  return (
    <Section title="Tasks that depend on it">
      <ul class="dependent-list">
        {dependents.map(({ t, d }) => (
          <li key={t.id} data-dependent={t.id}>
            {taskLink(t.project_id, t.id, tasks)} {statusBadge(t.status)}{" "}
            {d.dependency_type === "related"
              ? "related"
              : d.dependency_type === "input"
                ? `waits for its ${d.contract_key ?? ""} contract`
                : "waits until it is done"}
            {d.dependency_type !== "related" && d.resolved && " (released)"}
          </li>
        ))}
      </ul>
    </Section>
  );
}

interface SessionRef {
  id: string;
  name: string;
  server: string | null;
}

/** The sessions the task went to, in order (from its assignments), ending with the one it is with now. */
function sessionsOf(task: Task, events: HubEvent[]): SessionRef[] {
  const seen = new Map<string, SessionRef>();
  for (const e of events) {
    const { session_id: id, session_name: name, server_name: server } = e.data;
    if (e.event_type === "task_assigned" && typeof id === "string")
      seen.set(id, { id, name: typeof name === "string" ? name : id.slice(0, 8), server: typeof server === "string" ? server : null });
  }
  if (task.target_session_id && !seen.has(task.target_session_id))
    seen.set(task.target_session_id, { id: task.target_session_id, name: task.target_session_name ?? "", server: task.assigned_server_name });
  return [...seen.values()];
}

/** Links to the sessions that worked the task (each opens its terminal), and the one it came from. */
export function WorkedBy({ task, events }: { task: Task; events: HubEvent[] }) {
  const sessions = sessionsOf(task, events);
  const path = (id: string) => `/projects/${task.project_id}/sessions/${id}`;
  if (sessions.length === 0 && !task.source_session_id) return null;
  return (
    <Section title="Sessions">
      <ul class="worked-by">
        {sessions.map((s) => (
          <li key={s.id} data-session={s.id}>
            {s.id === task.target_session_id ? "Assigned to" : "Was assigned to"} session <a {...linkProps(path(s.id))}>{s.name}</a>
            {s.server && ` on ${s.server}`} · <a {...linkProps(path(s.id))}>open its terminal</a>
          </li>
        ))}
        {task.source_session_id && (
          <li>
            Created from session <a {...linkProps(path(task.source_session_id))}>{task.source_session_name ?? task.source_session_id.slice(0, 8)}</a>
          </li>
        )}
      </ul>
    </Section>
  );
}
