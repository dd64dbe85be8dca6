/** The task object both surfaces return (API.md "Tasks"; fields the official CLI reads included). */
import type { InferSelectModel } from "drizzle-orm";
import type { interventions, taskDependencies, taskNotes, tasks } from "../db/schema";
import { isBlocked } from "../domain/dependencies";

export type TaskRow = InferSelectModel<typeof tasks>;
/** A dependency with what the view shows of its upstream: its status, and for a resolved input the contract's data. */
export type DependencyRow = InferSelectModel<typeof taskDependencies> & { upstreamStatus: string; data: unknown };
export type NoteRow = InferSelectModel<typeof taskNotes>;
export type InterventionRow = InferSelectModel<typeof interventions>;

export interface TaskNames {
  assignedServerName: string | null;
  targetSessionName: string | null;
  sourceSessionName: string | null;
}

export const dependencyView = (d: DependencyRow) => ({
  depends_on_task_id: d.dependsOnTaskId,
  dependency_type: d.dependencyType,
  contract_key: d.contractKey,
  resolved: d.resolved,
  resolved_at: d.resolvedAt,
  depends_on_status: d.upstreamStatus,
});

export const noteView = (n: NoteRow) => ({
  id: n.id,
  task_id: n.taskId,
  author: n.author,
  content: n.content,
  urgent: n.urgent,
  created_at: n.createdAt,
});

/** Contract data delivered by resolved input dependencies, by contract key (null when the upstream did not deliver it). */
export function resolvedInputs(deps: DependencyRow[]): Record<string, unknown> {
  return Object.fromEntries(deps.filter((d) => d.dependencyType === "input" && d.resolved && d.contractKey).map((d) => [d.contractKey!, d.data ?? null]));
}

export function taskView(t: TaskRow, names: TaskNames, deps: DependencyRow[], notes: NoteRow[]) {
  return {
    id: t.id,
    project_id: t.projectId,
    title: t.title,
    spec: t.spec,
    type: t.type,
    priority: t.priority,
    status: t.status,
    target_repo: t.targetRepo,
    target_branch: t.targetBranch,
    acceptance_criteria: t.acceptanceCriteria,
    structured_spec: t.structuredSpec,
    requirements: t.requirements,
    result: t.result,
    error_code: t.errorCode,
    progress: t.progress,
    progress_message: t.progressMessage,
    plan: t.plan ?? null,
    plan_feedback: t.planFeedback,
    require_plan: t.requirePlan,
    timeout_seconds: t.timeoutSeconds,
    assigned_server_id: t.assignedServerId,
    assigned_server_name: names.assignedServerName,
    target_session_id: t.targetSessionId,
    target_session_name: names.targetSessionName,
    source_session_id: t.sourceSessionId,
    source_session_name: names.sourceSessionName,
    created_by: t.createdBy,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    started_at: t.startedAt,
    completed_at: t.completedAt,
    blocked: isBlocked(deps),
    dependencies: deps.map(dependencyView),
    resolved_inputs: resolvedInputs(deps),
    recent_notes: notes.map(noteView),
    warnings: t.warnings,
    client_id: t.clientId,
    payload: t.payload ?? null,
    context: t.context,
    routing: t.routing,
    observability: t.observability,
    error: t.error,
    retry_count: t.retryCount,
    late_result: t.lateResult ?? null,
    rejected_by: t.rejectedBy,
    trace_id: t.traceId,
    traceparent: t.traceparent,
  };
}
export type TaskView = ReturnType<typeof taskView>;

export const interventionView = (i: InterventionRow) => ({
  id: i.id,
  task_id: i.taskId,
  project_id: i.projectId,
  intervention_type: i.interventionType,
  question: i.question,
  context: i.context ?? null,
  status: i.status,
  response: i.response,
  responded_by: i.respondedBy,
  responded_at: i.respondedAt,
  asked_by: i.askedBy,
  target_session_id: i.targetSessionId,
  options: i.options ?? null,
  expires_at: i.expiresAt,
  created_at: i.createdAt,
});
