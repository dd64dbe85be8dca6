/** One task: what it asks, what came of it, its place among other tasks, its timeline, and the actions the person's role allows. */
import { useEffect, useRef, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { linkProps } from "../router";
import { fromLog, type HubEvent, type Intervention, type Match, type Task } from "../types";
import { useAssignees } from "./assignee-select";
import { awaitsApproval, Problem } from "./controls";
import { DiffStats } from "./diff-stats";
import { Markdown } from "./markdown";
import { ProjectTabs } from "./project-tabs";
import { Actions, ASSIGNABLE, FINISHED, readTask } from "./task-actions";
import type { EditProps } from "./task-edit";
import { lazy } from "./lazy";
import { Dependencies, Dependents, WorkedBy } from "./task-links";
import { AgentLogs } from "./task-logs";
import { Notes } from "./task-notes";
import { SaveAsTemplate } from "./save-as-template";
import { json, Requirements, Result, Section, StructuredSpec, TaskFormatRequest } from "./task-sections";
import { PhaseTimes, Timeline } from "./task-timeline";
import { Loading } from "../ui/states";
import { TaskUsage } from "./task-usage";
import { ReviewOf, TaskReviews } from "./task-reviews";
import { BUDGET_EVENTS, lastUsageSeq } from "../usage-live";

/** The task form loads when a task is first edited. */
const LazyEditForm = lazy(() => import("./task-edit").then((m) => m.EditTaskForm), "the task's form");

/** Edit, for those who may, while the task is unfinished. */
function EditTask(props: EditProps) {
  const canWrite = useCanWrite();
  const [open, setOpen] = useState(false);
  if (!canWrite || FINISHED.includes(props.task.status)) return null;
  return (
    <details class="edit-task" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Edit</summary>
      {open && <LazyEditForm {...props} />}
    </details>
  );
}

export function TaskPage({ projectId, taskId }: { projectId: string; taskId: string }) {
  const state = useProject(projectId);
  const live = state.tasks.get(taskId);
  const [task, setTask] = useState<Task | null>(null);
  const [timeline, setTimeline] = useState<HubEvent[]>([]);
  const [interventions, setInterventions] = useState<Intervention[]>([]);
  const [error, setError] = useState<string | null>(null);
  const assignees = useAssignees(projectId);

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
  const lastEventSeq = state.events.find((e) => e.task_id === taskId)?.seq ?? 0;
  // A usage batch names no task of its own, and a budget's state may change what the task view says of its budget.
  const usageSeq = lastUsageSeq(state.events, new Set([taskId]));
  const budgetSeq = state.events.find((e) => BUDGET_EVENTS.has(e.event_type))?.seq ?? 0;
  // Its dependencies (and the contracts they deliver) change with its upstreams.
  const upstreams = (task ?? live)?.dependencies.map((d) => state.tasks.get(d.depends_on_task_id)?.status).join() ?? "";
  // The task as the board knows it, read again whenever one of its events arrives or an upstream moves.
  useEffect(() => {
    const read = ++reads.current;
    void readTask(taskId).then(
      (t) => read === reads.current && setTask(t),
      (e) => read === reads.current && setError(e.message),
    );
  }, [taskId, live?.updated_at, live?.status, lastEventSeq, upstreams, usageSeq, budgetSeq]);
  useEffect(() => {
    void ok(hub.GET("/api/v1/tasks/{id}/events", { params: { path: { id: taskId } } })).then(
      (r) => setTimeline(r.events.map(fromLog)),
      () => undefined,
    );
    void ok(hub.GET("/api/v1/interventions", { params: { query: { task_id: taskId, status: "pending" } } })).then(setInterventions, () => undefined);
  }, [taskId, lastEventSeq]);

  const shown = task ?? live;
  // Its reviews change with its events and as its review tasks move.
  const reviewVersion = `${lastEventSeq}:${[...state.tasks.values()].flatMap((t) => (t.review_of === taskId ? [`${t.id}=${t.status}`] : [])).join()}`;
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
      <p class="task-page-links">
        <a {...linkProps(`/projects/${projectId}/board`)}>← Board</a>
        {shown && <SaveAsTemplate task={shown} />}
      </p>
      <Problem message={error} />
      {!shown && !error && <Loading what="the task" />}
      {shown && (
        <article>
          <h2>
            {shown.title} <span class={`status status-${shown.status}`}>{shown.status.replace("_", " ")}</span>
            {shown.archived && (
              <>
                {" "}
                <span class="badge archived" title="Moved to the project's archive: shown as it was then, and no longer changed">
                  archived
                </span>
              </>
            )}
          </h2>
          <p class="meta">
            <span class={`badge priority-${shown.priority}`}>{shown.priority}</span> <span class="badge type">{shown.type}</span>{" "}
            {shown.blocked && <span class="badge blocked">blocked</span>} {awaitsApproval(shown) && <span class="badge awaiting">awaiting approval</span>}{" "}
            {shown.require_plan && <span class="badge">requires a plan</span>} assignee: <strong>{shown.assigned_server_name ?? "none"}</strong>
            {shown.target_session_name && ` (session ${shown.target_session_name})`} · created by {shown.created_by}
          </p>
          <PhaseTimes task={shown} events={timeline} />
          <TaskUsage task={shown} events={state.events} />
          {awaitsApproval(shown) && (
            <p class="awaiting-note" role="status">
              An agent created this task, and the project asks a person to approve such tasks: it is not auto-assigned, and its agent does not start on it,
              until a member or admin approves it.
            </p>
          )}
          {!shown.archived && (
            <>
              <Actions task={shown} interventions={interventions} matches={matches} assignees={assignees} onChanged={show} />
              <EditTask task={shown} tasks={[...state.tasks.values()]} servers={assignees?.servers.map((s) => s.name) ?? []} onChanged={show} />
            </>
          )}
          <Section title="Spec">{shown.spec.trim() ? <Markdown source={shown.spec} /> : <p class="muted">No spec.</p>}</Section>
          {shown.acceptance_criteria.length > 0 && (
            <Section title="Acceptance criteria">
              <ul>
                {shown.acceptance_criteria.map((c) => (
                  <li>{c}</li>
                ))}
              </ul>
            </Section>
          )}
          {shown.requirements && <Requirements requirements={shown.requirements} />}
          {shown.structured_spec && <StructuredSpec spec={shown.structured_spec} />}
          {shown.client_id && <TaskFormatRequest task={shown} />}
          <Dependencies task={shown} tasks={state.tasks} />
          <Dependents task={shown} tasks={state.tasks} />
          <WorkedBy task={shown} events={timeline} />
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
          <TaskReviews task={shown} tasks={state.tasks} version={reviewVersion} />
          <ReviewOf task={shown} tasks={state.tasks} />
          {shown.status === "pending" && <MatchingServers matches={matches} />}
          <Notes task={shown} />
          <AgentLogs taskId={shown.id} />
          <Timeline events={timeline} />
        </article>
      )}
    </section>
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
