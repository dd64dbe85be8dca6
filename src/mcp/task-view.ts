/**
 * A hub task as an MCP task (the `io.modelcontextprotocol/tasks` extension, SEP-2663). Its id is the hub's, so it is the
 * board's task and the A2A task of the same id; its status is read through A2A's mapping so the two cannot drift, with
 * one difference the extension demands: a task its agent failed ran and reported an error, which MCP calls `completed`
 * with `result.isError` (`failed` is kept for a protocol error, which a hub task never is). Pure: no I/O.
 */
import { TaskState } from "@a2a-js/sdk";
import { a2aStateOf } from "../a2a/states";
import type { TaskStatus } from "../domain/lifecycle";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
/** How often a client following a task is asked to look again: a task is worked by agents, in minutes rather than milliseconds. */
export const POLL_INTERVAL_MS = 5000;

export type McpTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

const MCP_STATUS_OF: Partial<Record<TaskState, McpTaskStatus>> = {
  [TaskState.TASK_STATE_SUBMITTED]: "working",
  [TaskState.TASK_STATE_WORKING]: "working",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "input_required",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_FAILED]: "completed",
  [TaskState.TASK_STATE_CANCELED]: "cancelled",
};

export const mcpTaskStatusOf = (status: TaskStatus): McpTaskStatus => MCP_STATUS_OF[a2aStateOf(status)]!;

/** The task as the REST API answers it: the fields an MCP task is made of. */
export interface HubTask {
  id: string;
  status: TaskStatus;
  title: string;
  created_at: string;
  updated_at: string;
  result?: Record<string, unknown> | null;
  error?: { message?: string } | null;
  plan?: unknown;
  progress_message?: string | null;
}

/** An open question put to people, as the REST API answers it. */
export interface HubQuestion {
  id: string;
  question: string;
  options?: string[] | null;
  status: string;
  target_session_id?: string | null;
}

/** The key under which a task in plan review asks for its plan's verdict. */
export const planKey = (taskId: string) => `plan:${taskId}`;

/** The MCP form a question is answered in: a choice among its options, else free text. */
const answerSchema = (options: string[] | null | undefined) => ({
  type: "object",
  properties: { answer: options?.length ? { type: "string", title: "Answer", enum: options } : { type: "string", title: "Answer" } },
  required: ["answer"],
});

const PLAN_SCHEMA = {
  type: "object",
  properties: {
    approve: { type: "boolean", title: "Approve the plan" },
    feedback: { type: "string", title: "What to change (when not approving)" },
  },
  required: ["approve"],
};

const planText = (plan: unknown) => (typeof plan === "string" ? plan : JSON.stringify(plan ?? null, null, 2));

/** What the task waits on, as elicitations its client can answer with tasks/update. */
export function inputRequestsOf(task: HubTask, questions: readonly HubQuestion[]) {
  if (task.status === "plan_review")
    return {
      [planKey(task.id)]: {
        method: "elicitation/create" as const,
        params: { mode: "form" as const, message: `Review the plan of "${task.title}":\n\n${planText(task.plan)}`, requestedSchema: PLAN_SCHEMA },
      },
    };
  const open = questions.filter((q) => q.status === "pending" && !q.target_session_id);
  return Object.fromEntries(
    open.map((q) => [
      q.id,
      { method: "elicitation/create" as const, params: { mode: "form" as const, message: q.question, requestedSchema: answerSchema(q.options) } },
    ]),
  );
}

const summaryOf = (task: HubTask) => (typeof task.result?.summary === "string" ? task.result.summary : "");
const failureOf = (task: HubTask) => task.error?.message ?? (typeof task.result?.error === "string" ? task.result.error : "The task failed");

/** A finished task's tool result: the hub's result (its summary and contracts) as structured content. */
function resultOf(task: HubTask) {
  if (task.status === "failed")
    return {
      resultType: "complete",
      isError: true,
      content: [{ type: "text", text: failureOf(task) }],
      structuredContent: { error: task.error ?? null, result: task.result ?? null },
    };
  const structured = task.result ?? {};
  return { resultType: "complete", content: [{ type: "text", text: summaryOf(task) || JSON.stringify(structured) }], structuredContent: structured };
}

/** One line on where the task stands, for a person reading their client. */
function statusMessageOf(task: HubTask, questions: readonly HubQuestion[]) {
  switch (task.status) {
    case "needs_human":
      return questions.find((q) => q.status === "pending" && !q.target_session_id)?.question ?? "Waiting for a person";
    case "plan_review":
      return "Waiting for the plan to be reviewed";
    case "done":
      return summaryOf(task) || "Done";
    case "failed":
      return failureOf(task);
    default:
      return task.progress_message || task.status;
  }
}

const base = (task: HubTask, questions: readonly HubQuestion[]) => ({
  taskId: task.id,
  status: mcpTaskStatusOf(task.status),
  statusMessage: statusMessageOf(task, questions),
  createdAt: task.created_at,
  lastUpdatedAt: task.updated_at,
  // A hub task is kept as long as its project (archived, still readable): it has no time to live.
  ttlMs: null,
  pollIntervalMs: POLL_INTERVAL_MS,
});

/** The answer to a tools/call that made a task, when its client follows tasks. */
export const createdTaskOf = (task: HubTask) => ({ ...base(task, []), resultType: "task" as const });

/**
 * The task as tasks/get answers it. A client that cannot answer forms (no `elicitation` capability) is not sent them:
 * it sees the question in `statusMessage`, and a person answers it elsewhere.
 */
export function detailedTaskOf(task: HubTask, questions: readonly HubQuestion[], canElicit: boolean) {
  const detail = base(task, questions);
  switch (detail.status) {
    case "input_required":
      return { ...detail, inputRequests: canElicit ? inputRequestsOf(task, questions) : {} };
    case "completed":
      return { ...detail, result: resultOf(task) };
    default:
      return detail;
  }
}
