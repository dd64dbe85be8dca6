/**
 * The groups of events a project's Slack channel picks from: a copy of the hub's (src/domain/chat-events.ts
 * CHAT_EVENT_GROUPS), which refuses any other type; the browser tests check the two agree.
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

export const GROUP_LABELS: Record<ChatEventGroup, string> = {
  questions: "Questions and approvals",
  plans: "Plans to review",
  failures: "Failures",
  finished: "Finished tasks",
  budgets: "Budgets",
  servers: "Servers offline",
};

export const GROUPS = Object.keys(CHAT_EVENT_GROUPS) as ChatEventGroup[];

/** The events of the groups ticked; null (every kind) when all are. */
export function eventsOf(groups: ChatEventGroup[]): ChatEvent[] | null {
  return groups.length === GROUPS.length ? null : groups.flatMap((g) => CHAT_EVENT_GROUPS[g]);
}

/** The groups a channel's events cover (whole groups; a group partly picked through the API is named too). */
export const groupsOf = (events: readonly string[] | null): ChatEventGroup[] =>
  events === null ? GROUPS : GROUPS.filter((g) => CHAT_EVENT_GROUPS[g].some((e) => events.includes(e)));
