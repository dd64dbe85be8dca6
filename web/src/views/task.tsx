/** One task: what it asks, what came of it, its timeline, and the actions the person's role allows. */
import { useEffect, useRef, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { linkProps } from "../router";
import { fromLog, isTask, type HubEvent, type Intervention, type Match, type Task, type TaskStatus } from "../types";
import { DiffStats } from "./diff-stats";
import { ProjectTabs } from "./project-tabs";
import { ApproveButton, awaitsApproval, PrioritySelect, Problem, useAction } from "./controls";
import { json, Result, Section, StructuredSpec, TaskFormatRequest } from "./task-sections";
import { AgentLogs } from "./task-logs";
import { AutoAssign } from "./auto-assign";

/** The task as the hub has it now. */
const readTask = async (id: string) => {
  const t = await ok(hub.GET("/api/v1/tasks/{id}", { params: { path: { id } } }));
  if (!isTask(t)) throw new Error("The hub answered a task-format response");
  return t;
};
/** Statuses a task can be assigned (again) from. */
const ASSIGNABLE: TaskStatus[] = ["pending", "assigned", "planning"];

export function TaskPage({ projectId, taskId }: { projectId: string; taskId: string }) {
  const state = useProject(projectId);
  const live = state.tasks.get(taskId);
  const [task, setTask] = useState<Task | null>(null);
  const [timeline, setTimeline] = useState<HubEvent[]>([]);
  const [interventions, setInterventions] = useState<Intervention[]>([]);
  const [error, setError] = useState<string | null>(null);

  // Only the latest read lands: an older answer never replaces a newer one (or an action's result).
  const reads = useRef(0);
  const show = (t: Task) => {
    reads.current++;
    setTask(t);
  };
  useEffect(() => {
    setTask(null);
    setError(null);
  }, [taskId]);
  // The task as the board knows it, read again whenever one of its events arrives.
  useEffect(() => {
    const read = ++reads.current;
    void readTask(taskId).then(
      (t) => read === reads.current && setTask(t),
      (e) => read === reads.current && setError(e.message),
    );
  }, [taskId, live?.updated_at, live?.status]);
  const lastEventSeq = state.events.find((e) => e.task_id === taskId)?.seq ?? 0;
  useEffect(() => {
    void ok(hub.GET("/api/v1/tasks/{id}/events", { params: { path: { id: taskId } } })).then(
      (r) => setTimeline(r.events.map(fromLog)),
      () => undefined,
    );
    void ok(hub.GET("/api/v1/interventions", { params: { query: { task_id: taskId, status: "pending" } } })).then(setInterventions, () => undefined);
  }, [taskId, lastEventSeq]);

  const shown = task ?? live;
  // Read once for both the assign control and the list of matching servers.
  const assignable = shown !== undefined && shown !== null && ASSIGNABLE.includes(shown.status);
  const [matches, setMatches] = useState<Match[] | null>(null);
  useEffect(() => {
    setMatches(null);
    if (assignable)
      void ok(hub.GET("/api/v1/tasks/{id}/matching-agents", { params: { path: { id: taskId } } })).then(
        (r) => setMatches(r.servers),
        () => setMatches([]),
      );
  }, [taskId, assignable]);
  return (
    <section class="task-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="task" status={state.status} />
      <p>
        <a {...linkProps(`/projects/${projectId}/board`)}>← Board</a>
      </p>
      <Problem message={error} />
      {shown && (
        <article>
          <h2>
            {shown.title} <span class={`status status-${shown.status}`}>{shown.status.replace("_", " ")}</span>
          </h2>
          <p class="meta">
            <span class={`badge priority-${shown.priority}`}>{shown.priority}</span> <span class="badge type">{shown.type}</span>{" "}
            {shown.blocked && <span class="badge blocked">blocked</span>} {awaitsApproval(shown) && <span class="badge awaiting">awaiting approval</span>}{" "}
            assignee: <strong>{shown.assigned_server_name ?? "none"}</strong>
            {shown.target_session_name && ` (session ${shown.target_session_name})`} · created by {shown.created_by}
          </p>
          {awaitsApproval(shown) && (
            <p class="awaiting-note" role="status">
              An agent created this task, and the project asks a person to approve such tasks: it is not auto-assigned, and its agent does not start on it,
              until a member or admin approves it.
            </p>
          )}
          <Actions task={shown} interventions={interventions} matches={matches} onChanged={show} />
          <EditTask task={shown} onChanged={show} />
          <Section title="Spec">{shown.spec ? <pre class="text">{shown.spec}</pre> : <p class="muted">No spec.</p>}</Section>
          {shown.acceptance_criteria.length > 0 && (
            <Section title="Acceptance criteria">
              <ul>
                {shown.acceptance_criteria.map((c) => (
                  <li>{c}</li>
                ))}
              </ul>
            </Section>
          )}
          {shown.structured_spec && <StructuredSpec spec={shown.structured_spec} />}
          {shown.client_id && <TaskFormatRequest task={shown} />}
          {shown.dependencies.length > 0 && (
            <Section title="Dependencies">
              <ul>
                {shown.dependencies.map((d) => (
                  <li>
                    <a {...linkProps(`/projects/${projectId}/tasks/${d.depends_on_task_id}`)}>
                      {state.tasks.get(d.depends_on_task_id)?.title ?? d.depends_on_task_id.slice(0, 8)}
                    </a>{" "}
                    {d.dependency_type}
                    {d.contract_key && ` (${d.contract_key})`} — {d.resolved ? "resolved" : "unresolved"}
                  </li>
                ))}
              </ul>
            </Section>
          )}
          {Object.keys(shown.resolved_inputs ?? {}).length > 0 && (
            <Section title="Resolved inputs">
              <pre class="json">{json(shown.resolved_inputs)}</pre>
            </Section>
          )}
          {shown.plan != null && (
            <Section title="Plan">
              <pre class="json">{typeof shown.plan === "string" ? shown.plan : json(shown.plan)}</pre>
              {shown.plan_feedback && <p>Feedback: {shown.plan_feedback}</p>}
            </Section>
          )}
          {shown.result && <Result result={shown.result} />}
          {shown.git_diff_stats && (
            <Section title="Code changes">
              <DiffStats stats={shown.git_diff_stats} />
            </Section>
          )}
          {shown.status === "pending" && <MatchingServers matches={matches} />}
          <Notes task={shown} />
          <AgentLogs taskId={shown.id} />
          <Section title="Timeline">
            <ol class="timeline">
              {timeline.map((e) => (
                <li key={e.seq}>
                  <time dateTime={e.created_at}>{new Date(e.created_at).toLocaleString()}</time> <strong>{e.event_type.replaceAll("_", " ")}</strong>{" "}
                  <span class="muted">by {e.actor}</span>
                </li>
              ))}
            </ol>
          </Section>
        </article>
      )}
    </section>
  );
}

/** Editing what the task asks, while it is unfinished. */
function EditTask({ task, onChanged }: { task: Task; onChanged: (t: Task) => void }) {
  const canWrite = useCanWrite();
  const [draft, setDraft] = useState({ title: task.title, spec: task.spec, priority: task.priority, type: task.type });
  const { run, problem } = useAction();
  useEffect(() => setDraft({ title: task.title, spec: task.spec, priority: task.priority, type: task.type }), [task.id, task.updated_at]);
  if (!canWrite || ["done", "failed", "cancelled"].includes(task.status)) return null;
  const field = (key: "title" | "type") => (e: Event) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value });
  return (
    <details class="edit-task">
      <summary>Edit</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run("edit", async () => onChanged(await ok(hub.PUT("/api/v1/tasks/{id}", { params: { path: { id: task.id } }, body: draft }))));
        }}
      >
        <label>
          Title
          <input name="edit-title" required maxLength={500} value={draft.title} onInput={field("title")} />
        </label>
        <label>
          Type
          <input name="edit-type" required maxLength={100} value={draft.type} onInput={field("type")} />
        </label>
        <PrioritySelect value={draft.priority} onChange={(priority) => setDraft({ ...draft, priority })} />
        <label class="wide">
          Spec
          <textarea rows={5} value={draft.spec} onInput={(e) => setDraft({ ...draft, spec: e.currentTarget.value })} />
        </label>
        <button type="submit">Save changes</button>
        {problem("edit")}
      </form>
    </details>
  );
}

/** The servers that could take a pending task, best first, with the seed's scores and reasons. */
function MatchingServers({ matches }: { matches: Match[] | null }) {
  return (
    <Section title="Matching servers">
      {matches?.length === 0 && <p class="muted">No server serves this project yet.</p>}
      <ol class="matches">
        {matches?.map((m) => (
          <li key={m.server_id} class={m.score < 0 ? "disqualified" : undefined}>
            <strong>{m.server_name}</strong> <span class="badge">{m.score < 0 ? "cannot take it" : `score ${m.score}`}</span>{" "}
            <span class="muted">{m.reasons.join(" · ")}</span>
          </li>
        ))}
      </ol>
    </Section>
  );
}

function Notes({ task }: { task: Task }) {
  const canWrite = useCanWrite();
  const [content, setContent] = useState("");
  const [toDependents, setToDependents] = useState(false);
  const { run, problem } = useAction();
  return (
    <Section title="Notes">
      <ul class="notes">
        {task.recent_notes.map((n) => (
          <li key={n.id}>
            <strong>{n.author}</strong> {n.urgent && <span class="badge blocked">urgent</span>} {n.content}
          </li>
        ))}
      </ul>
      {canWrite && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void run("note", async () => {
              await ok(hub.POST("/api/v1/tasks/{id}/notes", { params: { path: { id: task.id } }, body: { content, notify_dependents: toDependents } }));
              setContent("");
              setToDependents(false);
            });
          }}
        >
          <label>
            Note
            <input name="note" required value={content} onInput={(e) => setContent(e.currentTarget.value)} />
          </label>
          <label class="switch">
            <input type="checkbox" name="notify-dependents" checked={toDependents} onChange={(e) => setToDependents(e.currentTarget.checked)} />
            Also tell the sessions working on the tasks that depend on this one
          </label>
          <button type="submit">Add note</button>
          {problem("note")}
        </form>
      )}
    </Section>
  );
}

function Actions({
  task,
  interventions,
  matches,
  onChanged,
}: {
  task: Task;
  interventions: Intervention[];
  matches: Match[] | null;
  onChanged: (t: Task) => void;
}) {
  const canWrite = useCanWrite();
  const { run, busy, problem } = useAction();
  const [server, setServer] = useState("");
  const [feedback, setFeedback] = useState("");
  const [answers, setAnswers] = useState<Record<string, string>>({});
  if (!canWrite) return null;
  const path = { params: { path: { id: task.id } } };
  /** Runs a call answering the task, and shows the task it answered. */
  const act = (key: string, call: () => Promise<Task>) => run(key, async () => onChanged(await call()));
  const button = (key: string, label: string, call: () => Promise<Task>) => (
    <span class="action">
      <button type="button" disabled={busy !== null} onClick={() => void act(key, call)}>
        {label}
      </button>
      {problem(key)}
    </span>
  );
  const unfinished = !["done", "failed", "cancelled"].includes(task.status);

  return (
    <div class="actions" role="group" aria-label="Actions">
      {awaitsApproval(task) && <ApproveButton task={task} onApproved={onChanged} />}
      {ASSIGNABLE.includes(task.status) && (
        <form
          class="inline"
          onSubmit={(e) => {
            e.preventDefault();
            void act("assign", () => ok(hub.POST("/api/v1/tasks/{id}/assign", { ...path, body: { server_name: server } })));
          }}
        >
          <label>
            Assign to
            <select name="server" value={server} onChange={(e) => setServer(e.currentTarget.value)}>
              <option value="">choose a server</option>
              {matches?.map((m) => (
                <option value={m.server_name} title={m.reasons.join("; ")}>
                  {m.server_name} (score {m.score})
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!server}>
            Assign
          </button>
          {problem("assign")}
        </form>
      )}
      {task.status === "pending" && !task.awaiting_approval && (
        <AutoAssign task={task} matches={matches} onAssigned={async () => onChanged(await readTask(task.id))} />
      )}
      {task.status === "plan_review" && (
        <>
          {button("approve", "Approve plan", () => ok(hub.POST("/api/v1/tasks/{id}/approve-plan", path)))}
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              void act("revise", () => ok(hub.POST("/api/v1/tasks/{id}/revise-plan", { ...path, body: { feedback } })));
            }}
          >
            <label>
              Changes to ask for
              <input name="feedback" required value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
            </label>
            <button type="submit">Ask for changes</button>
            {problem("revise")}
          </form>
        </>
      )}
      {interventions.map((i) => (
        <form
          class="intervention"
          key={i.id}
          onSubmit={(e) => {
            e.preventDefault();
            void run(`answer-${i.id}`, () =>
              ok(hub.POST("/api/v1/interventions/{id}/respond", { params: { path: { id: i.id } }, body: { response: answers[i.id] ?? "" } })),
            );
          }}
        >
          <p>
            <strong>{i.intervention_type}</strong> from {i.asked_by}: {i.question}
          </p>
          <label>
            Answer
            <input name="answer" required value={answers[i.id] ?? ""} onInput={(e) => setAnswers({ ...answers, [i.id]: e.currentTarget.value })} />
          </label>
          <button type="submit">Send answer</button>
          {problem(`answer-${i.id}`)}
        </form>
      ))}
      {task.status === "failed" && button("retry", "Retry", () => ok(hub.POST("/api/v1/tasks/{id}/retry", path)))}
      {unfinished && (
        <span class="action">
          <button type="button" class="danger" onClick={() => void act("cancel", () => ok(hub.DELETE("/api/v1/tasks/{id}", path)))}>
            Cancel task
          </button>
          {problem("cancel")}
        </span>
      )}
    </div>
  );
}
