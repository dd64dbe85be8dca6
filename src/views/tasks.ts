/** The task object both surfaces return (API.md "Tasks"; fields the official CLI reads included), and what comes with it. */
import type { InferSelectModel } from "drizzle-orm";
import { z } from "zod";
import type { UsageAmounts } from "../domain/usage";
import { usageAmountsSchema } from "./usage";
import { INTERVENTION_STATUSES, INTERVENTION_TYPES, PRIORITIES, type interventions, type taskDependencies, type taskNotes, type tasks } from "../db/schema";
import { deliveredInput, isBlocked } from "../domain/dependencies";
import { TASK_STATUSES, type TaskStatus } from "../domain/lifecycle";
import { TASK_REVIEW_STATUSES } from "../domain/code-review";
import { DEPENDENCY_TYPES } from "../protocol/orchestratia-v1";
import { id, json, jsonObject, timestamp } from "./fields";
import { BUDGET_STATES } from "../db/schema";
import type { TaskBudget } from "../domain/budgets";

export type TaskRow = InferSelectModel<typeof tasks>;
/** A dependency with what the view shows of its upstream: its status, and for a resolved input the contract's entry. */
export type DependencyRow = InferSelectModel<typeof taskDependencies> & { upstreamStatus: string; contract: unknown };
export type NoteRow = InferSelectModel<typeof taskNotes>;
export type InterventionRow = InferSelectModel<typeof interventions>;

export interface TaskNames {
  assignedServerName: string | null;
  targetSessionName: string | null;
  sourceSessionName: string | null;
}

const taskStatus = z.enum(TASK_STATUSES);
/** Who did something: a person's email, `agent:<server name>`, or `hub` for what the hub does by itself. */
const actorLabel = z.string().meta({ description: "A person's email, `agent:<server name>`, or `hub`" });

export const dependencySchema = z
  .object({
    depends_on_task_id: id,
    dependency_type: z.enum(DEPENDENCY_TYPES),
    contract_key: z.string().nullable().meta({ description: "The upstream result's contract an `input` dependency reads" }),
    resolved: z.boolean(),
    resolved_at: timestamp.nullable(),
    depends_on_status: taskStatus.meta({ description: "The upstream task's status now" }),
  })
  .meta({ id: "TaskDependency" });

export const dependencyView = (d: DependencyRow): z.infer<typeof dependencySchema> => ({
  depends_on_task_id: d.dependsOnTaskId,
  dependency_type: d.dependencyType,
  contract_key: d.contractKey,
  resolved: d.resolved,
  resolved_at: d.resolvedAt,
  depends_on_status: d.upstreamStatus as TaskStatus,
});

export const noteSchema = z
  .object({ id, task_id: id, author: actorLabel, content: z.string(), urgent: z.boolean(), created_at: timestamp })
  .meta({ id: "TaskNote" });

export const noteView = (n: NoteRow): z.infer<typeof noteSchema> => ({
  id: n.id,
  task_id: n.taskId,
  author: n.author,
  content: n.content,
  urgent: n.urgent,
  created_at: n.createdAt,
});

/** What resolved input dependencies delivered, by contract key (deliveredInput: the data, or a partial or skipped entry with its status, or null). */
export function resolvedInputs(deps: DependencyRow[]): Record<string, unknown> {
  return Object.fromEntries(
    deps.filter((d) => d.dependencyType === "input" && d.resolved && d.contractKey).map((d) => [d.contractKey!, deliveredInput(d.contract)]),
  );
}

/** The task-format error block (seeds/task-format.md §Error Block) a failed task keeps. */
export const errorBlockSchema = z
  .object({
    code: z.string().meta({ description: "`TASK_FAILED` when the failure named no code; `TIMEOUT`, `AGENT_LOST`, `AGENT_RETRY`, `AGENT_FAILED` from the hub" }),
    message: z.string(),
    details: json.optional(),
    recoverable: z.boolean(),
  })
  .meta({ id: "TaskError" });
type ErrorBlock = z.infer<typeof errorBlockSchema>;

/** A result that came after the task failed or was cancelled (compute protocol): kept, not applied. */
const lateResultSchema = z
  .object({
    result: jsonObject,
    structured: z.boolean().meta({ description: "Whether the result is a task-result/v1 object" }),
    server_id: id,
    server_name: z.string(),
    received_at: timestamp,
    response: jsonObject.optional().meta({ description: "The Task Response's `artifacts` and `metadata` sent with it" }),
  })
  .meta({ id: "LateResult" });

/** What the agent's last commit changed, as `orchestratia task complete` measured it (git --numstat). */
export const gitDiffStatsSchema = z
  .object({
    files_changed: z.int().meta({ description: "Files the commit changed, binary ones included" }),
    insertions: z.int(),
    deletions: z.int(),
    files: z.array(z.object({ path: z.string(), insertions: z.int(), deletions: z.int() })).meta({ description: "Per text file; possibly fewer than changed" }),
    binary_files: z.array(z.string()),
    head_commit: z.string().nullable(),
    base_commit: z.string().nullable().meta({ description: "Null: the commit was compared with its parent" }),
  })
  .meta({ id: "GitDiffStats" });

const taskBudgetSchema = z
  .object({
    budget_id: id.meta({ description: "The tightest budget: the one in the worst state, then with the least of its limit left" }),
    remaining_usd: z.number().optional().meta({ description: "What is left, in USD, of the tightest of its budgets in USD (none below 0)" }),
    remaining_tokens: z.int().optional().meta({ description: "What is left, in tokens, of the tightest of its budgets in tokens" }),
    state: z.enum(BUDGET_STATES).meta({ description: "`held` or `stopped`: nothing new in the task's scope is assigned or started" }),
  })
  .meta({ id: "TaskBudget" });

export const taskSchema = z
  .object({
    id,
    project_id: id,
    title: z.string(),
    spec: z.string(),
    type: z.string().meta({ description: "A free string: feature, bugfix, …, or a capability name" }),
    priority: z.enum(PRIORITIES),
    status: taskStatus,
    target_repo: z.string().nullable(),
    target_branch: z.string().nullable(),
    acceptance_criteria: z.array(z.string()),
    structured_spec: jsonObject.nullable().meta({ description: "An orchestratia/task-spec/v1 object; large parts are DataRefs" }),
    requirements: jsonObject.nullable().meta({ description: "An orchestratia/requirements/v1 object" }),
    result: jsonObject
      .nullable()
      .meta({ description: "A task-result/v1 object, a legacy object, an output envelope, or `{error, code?}` for a failure; large parts are DataRefs" }),
    error_code: z.string().nullable(),
    progress: z.number().nullable().meta({ description: "The agent's last progress report, 0 to 1" }),
    progress_message: z.string().nullable(),
    plan: json.meta({ description: "The plan the agent submitted (null before)" }),
    plan_feedback: z.string().nullable(),
    require_plan: z.boolean(),
    timeout_seconds: z.int().nullable(),
    assigned_server_id: id.nullable(),
    assigned_server_name: z.string().nullable(),
    target_session_id: id.nullable(),
    target_session_name: z.string().nullable(),
    source_session_id: id.nullable(),
    source_session_name: z.string().nullable(),
    created_by: actorLabel,
    created_at: timestamp,
    updated_at: timestamp,
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    blocked: z.boolean().meta({ description: "An unresolved `blocks` or `input` dependency holds the task back" }),
    awaiting_approval: z.boolean().meta({
      description:
        "An agent created the task while its project approves agents' tasks (`settings.approve_agent_tasks`): it is not auto-assigned, started " +
        "or planned until a person approves it (`POST /api/v1/tasks/{id}/approve`)",
    }),
    dependencies: z.array(dependencySchema),
    resolved_inputs: z.record(z.string(), json).meta({
      description:
        "What resolved `input` dependencies delivered, by contract key: a fulfilled contract's data; a partial or skipped contract as its entry " +
        "`{status, data?, reason?}`; null when not delivered",
    }),
    recent_notes: z.array(noteSchema).meta({ description: "The last 20 notes, oldest first" }),
    warnings: z.array(z.string()),
    client_id: z.string().nullable().meta({ description: "A task-format request's `id`" }),
    payload: jsonObject.nullable().meta({ description: "A task-format request's payload" }),
    context: jsonObject.nullable(),
    routing: jsonObject.nullable(),
    observability: jsonObject.nullable(),
    extensions: jsonObject
      .nullable()
      .meta({ description: "A task-format request's top-level fields the seed does not name, kept as sent (each with a line in `warnings`)" }),
    error: errorBlockSchema.nullable(),
    response: jsonObject
      .nullable()
      .meta({ description: "What a task-format Task Response sent to complete carried beside its result or error: `{artifacts?, metadata?}`, as sent" }),
    retry_count: z.int(),
    late_result: lateResultSchema.nullable(),
    git_diff_stats: gitDiffStatsSchema.nullable().meta({ description: "Sent with the completion by the official CLI; null when none was" }),
    rejected_by: z.array(id).meta({ description: "Servers that rejected the task; auto-assignment passes them over" }),
    review: z
      .object({
        status: z.enum(TASK_REVIEW_STATUSES),
        attempt: z.int().meta({ description: "The latest attempt (1 for the first completion reviewed)" }),
      })
      .nullable()
      .meta({
        description:
          "Where the task stands in its project's code-review loop: `reviewing`, `changes_requested` (its worker was asked for a fix), `passed`, " +
          "`warned`, `failed` or `error`; null when no review was asked. Every attempt: GET /api/v1/tasks/{id}/reviews",
      }),
    review_of: id.nullable().meta({ description: "A review task's: the task whose change it reviews" }),
    trace_id: z.string().nullable(),
    traceparent: z.string().nullable(),
    usage: usageAmountsSchema.nullable().meta({ description: "What the agents reported using on this task, in all; null until they report any" }),
    budget: taskBudgetSchema.nullable().meta({
      description:
        "The tightest budget the task is under (its project's per day or month, and those of task graphs it is in): null under none. " +
        "An agent reads `budget.remaining_usd` before spending more.",
    }),
    archived: z
      .literal(true)
      .optional()
      .meta({ description: "Present on a task moved to the project's archive (`archive_after_days`): it is answered as it was when it moved" }),
  })
  .meta({ id: "Task" });
export type TaskView = z.infer<typeof taskSchema>;

export function taskView(
  t: TaskRow,
  names: TaskNames,
  deps: DependencyRow[],
  notes: NoteRow[],
  usage: UsageAmounts | null,
  budget: TaskBudget | null,
): TaskView {
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
    awaiting_approval: t.awaitingApproval,
    dependencies: deps.map(dependencyView),
    resolved_inputs: resolvedInputs(deps),
    recent_notes: notes.map(noteView),
    warnings: t.warnings,
    client_id: t.clientId,
    // Kept as sent: a task-format payload and an update's payload are both objects.
    payload: (t.payload ?? null) as Record<string, unknown> | null,
    context: t.context,
    routing: t.routing,
    observability: t.observability,
    extensions: t.extensions ?? null,
    error: t.error as ErrorBlock | null,
    response: t.response,
    retry_count: t.retryCount,
    late_result: (t.lateResult ?? null) as z.infer<typeof lateResultSchema> | null,
    git_diff_stats: (t.gitDiffStats ?? null) as z.infer<typeof gitDiffStatsSchema> | null,
    rejected_by: t.rejectedBy,
    review: t.reviewStatus ? { status: t.reviewStatus, attempt: t.reviewAttempt } : null,
    review_of: t.reviewOf,
    trace_id: t.traceId,
    traceparent: t.traceparent,
    usage,
    budget,
  };
}

/** A page of tasks, newest first. */
export const taskPageSchema = z.object({
  tasks: z.array(taskSchema),
  count: z.int().meta({ description: "How many tasks this page holds" }),
  next_cursor: z.string().nullable().meta({ description: "Send as `cursor` for the next page; null on the last" }),
});

export const interventionSchema = z
  .object({
    id,
    task_id: id.nullable().meta({ description: "Null for a question an agent asked outside any task" }),
    project_id: id,
    intervention_type: z.enum(INTERVENTION_TYPES),
    question: z.string(),
    context: json,
    status: z.enum(INTERVENTION_STATUSES),
    response: z.string().nullable(),
    responded_by: actorLabel.nullable(),
    responded_at: timestamp.nullable(),
    asked_by: actorLabel,
    target_session_id: id.nullable().meta({
      description: "The session whose agent was asked (the daemon's `ask_agent`): only its server, or a person, answers; the task does not wait on it",
    }),
    options: json.meta({ description: "The answers an agent's ask-user request offered (null for none)" }),
    expires_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: "Intervention" });

export const interventionView = (i: InterventionRow): z.infer<typeof interventionSchema> => ({
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

/** The input envelope an agent is given for a task (seeds/agent-envelope.md). */
export const inputEnvelopeSchema = z
  .object({
    context: z.object({
      feature_id: z.string().meta({ description: "The task's context or spec `feature_id`, else the task's id" }),
      workflow: z.string().meta({ description: "The task's context `workflow`, else its type" }),
      iteration: z.int().meta({ description: "1 on the first run, one more for each retry" }),
    }),
    paths: z.record(z.string(), z.string()).meta({ description: "Every file path the task names, by name" }),
    task: z.object({ action: z.string().meta({ description: "The task's type" }), params: jsonObject }),
    prior_context: z.array(z.string()).meta({ description: "Notes passed forward by upstream envelopes, resolved inputs in short, then the task's notes" }),
  })
  .meta({ id: "InputEnvelope" });
