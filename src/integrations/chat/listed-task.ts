/** An open task as a chat's /tasks lists it (pure, so the chats' message modules read it without the queries). */
export interface ListedTask {
  id: string;
  title: string;
  status: string;
  project: string;
  /** An agent's task in a project that approves them, not approved yet: it waits on a person too. */
  awaiting_approval: number;
}

/** The statuses in which a task waits on a person: /tasks lists them first. */
export const WAITING_ON_PEOPLE = ["needs_human", "plan_review"];
