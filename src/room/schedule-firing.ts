/**
 * The room's schedules at its alarm: each schedule whose next slot has come is handled by its own operation
 * (`fire_schedule`, which decides and advances it in one batch), then waiting tasks are offered when a graph with
 * requirements was made. Runs inside the room's queue; the clock is passed in, so the alarm and a caller that moves it
 * share one path.
 */
import { and, eq, gt, isNotNull, min } from "drizzle-orm";
import type { Db } from "../db/client";
import { schedules } from "../db/schema";
import { log, logError } from "../runtime/log";
import { HUB_ACTOR } from "../runtime/room-rpc";
import type { RoomCommand } from "./commands";
import type { RoomWriter } from "./room-writer";

/** The most schedules handled in one wake-up; more due wake the room again at once. */
const BATCH = 100;
/** How soon a schedule whose firing failed is tried again (its slot is still due: nothing of it committed). */
const RETRY_MS = 60_000;

/** Handles every schedule due at `now`; answers when the project's next slot is due (epoch ms), or null for none. */
export async function fireDueSchedules(writer: RoomWriter, projectId: string, now: number): Promise<number | null> {
  // One read on most wake-ups: the earliest schedules, those due among them, and otherwise when the first is.
  const earliest = await writer.db
    .select({ id: schedules.id, nextRunAt: schedules.nextRunAt })
    .from(schedules)
    .where(and(eq(schedules.projectId, projectId), isNotNull(schedules.nextRunAt)))
    .orderBy(schedules.nextRunAt)
    .limit(BATCH);
  const due = earliest.filter((s) => Date.parse(s.nextRunAt!) <= now);
  if (due.length === 0) return earliest[0] ? Date.parse(earliest[0].nextRunAt!) : null;
  const apply = (command: RoomCommand) => writer.apply({ actor: HUB_ACTOR, command, withView: false });
  let offer = false;
  let failed = false;
  for (const { id } of due) {
    try {
      const answer = await apply({ op: "fire_schedule", scheduleId: id, now });
      if (answer.ok) offer ||= answer.data?.offer === true;
      else {
        failed = true;
        log("warn", "a schedule's slot was refused", { project_id: projectId, operation: "fire_schedule", schedule_id: id, detail: answer.problem.detail });
      }
    } catch (e) {
      failed = true;
      logError("firing a schedule failed", { project_id: projectId, operation: "fire_schedule", schedule_id: id }, e);
    }
  }
  if (offer) {
    try {
      await apply({ op: "sweep" });
    } catch (e) {
      // The graphs have committed; their tasks are offered again as servers come and tasks end.
      logError("offering a scheduled graph's tasks failed", { project_id: projectId, operation: "sweep" }, e);
    }
  }
  if (!failed) return nextSlotAt(writer.db, projectId);
  // What failed is still due: it is tried again in a while, not at once, and the other schedules at their slots.
  return Math.min((await nextSlotAt(writer.db, projectId, now)) ?? Infinity, now + RETRY_MS);
}

/** When the project's earliest schedule (after `after`, if given) is next due (epoch ms), or null when none is (all paused, or none). */
export async function nextSlotAt(db: Db, projectId: string, after?: number): Promise<number | null> {
  const [row] = await db
    .select({ at: min(schedules.nextRunAt) })
    .from(schedules)
    .where(
      and(
        eq(schedules.projectId, projectId),
        isNotNull(schedules.nextRunAt),
        after === undefined ? undefined : gt(schedules.nextRunAt, new Date(after).toISOString()),
      ),
    );
  return row?.at ? Date.parse(row.at) : null;
}
