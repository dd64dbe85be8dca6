/**
 * The room's look at its project's liveness rules, run in its queue by the
 * alarm: each task a rule would flag is one operation, which decides again from
 * fresh reads in the batch that writes the flag. Answers when to look again:
 * only while a rule is on and there are tasks for it to watch.
 */
import { firstLook, latestOf, startsLivenessWatch, stallDecision, unassignableDecision, watchesLiveness } from "../domain/liveness";
import { rankServers } from "../domain/matching";
import { serverCandidates } from "../db/server-candidates";
import type { Requirements } from "../protocol/orchestratia-v1";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { earliest } from "./earliest";
import { runningTasks, stallFacts, waitingTasks } from "./liveness-reads";
import type { RoomWriter } from "./room-writer";
import type { CommittedEvent } from "./statements";

export class RoomLiveness {
  constructor(
    private readonly writer: RoomWriter,
    private readonly d1: D1Database,
    private readonly projectId: string,
    private readonly scheduleAlarm: (at: number) => Promise<void>,
  ) {}

  /** Flags what is due at `now` (run in the room's queue); answers when to look again. */
  check(now: number): Promise<number | null> {
    return checkLiveness(this.writer, this.d1, this.projectId, now);
  }

  /** After a commit: a task that began to work or to wait, or a rule changed, is looked at once the shortest rule's time has passed. */
  async watch(events: readonly CommittedEvent[]) {
    if (!events.some(startsLivenessWatch)) return;
    const at = firstLook(await this.writer.projectSettings(), Date.now());
    if (at !== null) await this.scheduleAlarm(at);
  }
}

async function checkLiveness(writer: RoomWriter, d1: D1Database, projectId: string, now: number): Promise<number | null> {
  const settings = await writer.projectSettings();
  if (!watchesLiveness(settings)) return null;
  const at = new Date(now).toISOString();
  const flag = (op: "flag_stalled" | "flag_unassignable", taskId: string) => writer.apply({ actor: HUB_ACTOR, command: { op, taskId, at }, withView: false });
  let next: number | null = null;
  if (settings.stall_minutes !== null) {
    for (const t of await runningTasks(d1, projectId)) {
      const facts = stallFacts(t, t.started_at, t.stalled_at);
      const decision = stallDecision(facts, settings.stall_minutes, now);
      if (decision.raise) await flag("flag_stalled", t.id);
      next = earliest([next, decision.raise ? now + settings.stall_minutes * 60_000 : decision.recheckAt]);
    }
  }
  if (settings.unassignable_minutes !== null) {
    const waiting = await waitingTasks(d1, projectId);
    const candidates = waiting.length ? await serverCandidates(writer.db, projectId) : [];
    for (const t of waiting) {
      const matches = rankServers(JSON.parse(t.requirements) as Requirements, candidates, JSON.parse(t.rejected_by) as string[]);
      const waitingSince = new Date(latestOf([t.created_at, t.last_wait_event])!).toISOString();
      const decision = unassignableDecision({ waitingSince, flaggedAt: t.unassignable_at, matches }, settings.unassignable_minutes, now);
      if (decision.flag) await flag("flag_unassignable", t.id);
      else next = earliest([next, decision.recheckAt]);
    }
  }
  return next;
}
