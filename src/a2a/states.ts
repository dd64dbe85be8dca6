/** The hub's task statuses as A2A task states (API.md "A2A front door"), both ways. */
import { TaskState } from "@a2a-js/sdk";
import type { TaskStatus } from "../domain/lifecycle";

const STATE_OF: Record<TaskStatus, TaskState> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  assigned: TaskState.TASK_STATE_SUBMITTED,
  planning: TaskState.TASK_STATE_WORKING,
  running: TaskState.TASK_STATE_WORKING,
  plan_review: TaskState.TASK_STATE_INPUT_REQUIRED,
  needs_human: TaskState.TASK_STATE_INPUT_REQUIRED,
  done: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

export const a2aStateOf = (status: TaskStatus): TaskState => STATE_OF[status];

/** The hub's statuses an A2A state filter names (none for a state the hub never shows, such as rejected). */
export const statusesOf = (state: TaskState): TaskStatus[] => (Object.keys(STATE_OF) as TaskStatus[]).filter((s) => STATE_OF[s] === state);

const TERMINAL = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);
const INTERRUPTED = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

export const isTerminal = (state: TaskState) => TERMINAL.has(state);

/** A stream about a task ends here: the task finished, or waits for its client. */
export const endsStream = (state: TaskState) => TERMINAL.has(state) || INTERRUPTED.has(state);
