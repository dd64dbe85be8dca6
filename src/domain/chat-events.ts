/**
 * The events people hear of in chat (Telegram, Slack), in the groups a channel picks from. A question one agent asks
 * another is for that agent and is never told.
 */
export const CHAT_EVENT_GROUPS = {
  questions: ["intervention_requested", "task_awaiting_approval"],
  plans: ["plan_submitted"],
  failures: ["task_failed", "task_stalled", "task_unassignable", "review_failed", "review_exhausted"],
  finished: ["task_completed"],
  budgets: ["budget_warned", "budget_held", "budget_stopped", "budget_released"],
  servers: ["server_offline"],
} as const;

export type ChatEventGroup = keyof typeof CHAT_EVENT_GROUPS;
export type ChatEvent = (typeof CHAT_EVENT_GROUPS)[ChatEventGroup][number];

export const CHAT_EVENTS: readonly ChatEvent[] = Object.values(CHAT_EVENT_GROUPS).flat();

/**
 * Events that settle what an earlier message asked for (a question answered or timed out, a task or plan approved, a
 * failed task retried or cancelled): Slack updates that message in place, whoever acted and wherever.
 */
export const SETTLING_EVENTS = [
  "intervention_responded",
  "intervention_timed_out",
  "task_approved",
  "plan_approved",
  "plan_revision_requested",
  "task_retried",
  "task_cancelled",
] as const;

/**
 * Events that end a task: its questions, approval and plan still asking are settled by it (the task no longer waits
 * for an answer), though no event settles each of them. A channel that did not pick one is still owed it where it
 * posted about the task, to settle those messages.
 */
export const TASK_ENDING_EVENTS = ["task_completed", "task_failed", "task_cancelled"] as const;
