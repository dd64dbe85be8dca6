/**
 * What a batch committed, for the room to hand on (`Committed`), and the pure readings of a batch's plans and
 * results it is made from.
 */
import { isProblem, type AgentNotice, type OpOutcome, type WritePlan } from "./operations";
import type { OutboxTarget } from "./outbox";
import type { CommittedEvent } from "./statements";

/** What one batch committed, for the room to hand on. */
export interface Committed {
  events: CommittedEvent[];
  /** Answers agents wait for, and word that none will come (a question's task ended). */
  notices: AgentNotice[];
  /** Deadlines the operations set, for the room's alarm. */
  deadlines: string[];
  /** Integrations the batch recorded deliveries for, to wake. */
  outbox: OutboxTarget[];
  /** Tasks the batch wrote that belong to no session (their rows were read in the turn): no daemon hears of them. */
  sessionless: ReadonlySet<string>;
  /** Tasks the batch completed that others given to sessions depend on: the sessions working on those hear of it. */
  withDependents: ReadonlySet<string>;
}

/** Consecutive slices of `items`, of the given lengths. */
export function splitAt<T, N extends number[]>(items: T[], ...lengths: N): { [K in keyof N]: T[] } {
  let start = 0;
  return lengths.map((n) => items.slice(start, (start += n))) as { [K in keyof N]: T[] };
}

/** The most tasks given to servers one batch reads back for the room to hold. */
const MAX_GIVEN = 64;

/** Tasks the plans give to a server (assigned, or to plan first): their agents start them next. */
export function givenTasks(plans: WritePlan[]): string[] {
  const ids = new Set<string>();
  for (const p of plans) {
    const after = p.effects?.task?.after;
    if (after && (after.status === "assigned" || after.status === "planning")) ids.add(after.id);
    for (const a of p.effects?.assignments ?? []) ids.add(a.taskId);
  }
  return [...ids].slice(0, MAX_GIVEN);
}

/** Tasks written by these outcomes whose rows, as planned, name neither a target nor a source session. */
export function sessionlessTasks(outcomes: OpOutcome[]): Set<string> {
  const ids = new Set<string>();
  for (const o of outcomes) {
    const after = isProblem(o) ? undefined : o.effects?.task?.after;
    if (after && after.targetSessionId === null && after.sourceSessionId === null) ids.add(after.id);
  }
  return ids;
}

/** Agents waiting on a question whose task just ended hear that no answer will come (the cancelled rows name them). */
export function abandonedQuestions(results: D1Result[]): AgentNotice[] {
  return results
    .flatMap((r) => r.results as { waiting_server_id?: string | null; waiting_correlation_id?: string | null }[])
    .flatMap((row) =>
      row.waiting_server_id && row.waiting_correlation_id
        ? [
            {
              kind: "timeout" as const,
              serverId: row.waiting_server_id,
              correlationId: row.waiting_correlation_id,
              message: "Closed unanswered: its task ended",
            },
          ]
        : [],
    );
}
