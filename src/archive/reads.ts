/**
 * Reading the archive: where an archived task lives, its records, and the project's events after a seq across the
 * boundary (those in R2 merged with those still in D1, in seq order).
 */
import type { TaskView } from "../views/tasks";
import { decodeNdjson } from "./codec";
import { mergeBySeq } from "./plan";
import { rowOf, type ArchiveRecord, type EventView } from "./records";
import { interventions, taskNotes } from "../db/schema";
import type { InterventionRow, NoteRow } from "../views/tasks";
import { liveEventsSince, liveTaskEvents } from "./task-events";
import { onEveryShard } from "../db/shards";
import type { Env } from "../runtime/env";
import { Problem } from "../http/problem";
import { logError } from "../runtime/log";

/** Archived objects a page of the log opens at most beyond what it must (see eventsSince). */
export const OBJECTS_PER_PAGE = 8;

/** An object the archive's index names is not (whole) in R2: logged, and answered 503 saying which, never a bare 500. */
function archiveUnavailable(key: string, what: string): Problem {
  logError("archive object unavailable", { operation: "archive-read" }, new Error(`${key}: ${what}`));
  return new Problem(503, "ARCHIVE_UNAVAILABLE", `The archived object ${key} is ${what}; try again later`, undefined, { "Retry-After": "60" });
}

export interface ArchivedTaskEntry {
  task_id: string;
  project_id: string;
  key: string;
  batch_id: string;
  /** The shard whose archive index names it. */
  shard?: string;
}

/** Where the task lives in the archive: asked of every shard at once, since only the id is known. */
export async function archivedTaskEntry(env: Env, taskId: string): Promise<ArchivedTaskEntry | null> {
  const found = await onEveryShard(env, async (d1, shard) => {
    const entry = await d1.prepare("SELECT task_id, project_id, key, batch_id FROM archived_tasks WHERE task_id = ?1").bind(taskId).first<ArchivedTaskEntry>();
    return entry && { ...entry, shard };
  });
  return found.find((entry) => entry !== null) ?? null;
}

/** An archive object's records (objects never change once their batch is done: a few are kept per isolate). */
const recent = new Map<string, ArchiveRecord[]>();
export async function archiveRecords(bucket: R2Bucket, key: string): Promise<ArchiveRecord[]> {
  const held = recent.get(key);
  if (held) return held;
  const object = await bucket.get(key);
  if (!object) throw archiveUnavailable(key, "missing");
  const records = await decodeNdjson<ArchiveRecord>(await object.arrayBuffer()).catch(() => {
    throw archiveUnavailable(key, "unreadable");
  });
  if (recent.size >= 8) recent.delete(recent.keys().next().value!);
  recent.set(key, records);
  return records;
}

/** The task's records in its object. */
export async function archivedTaskRecords(bucket: R2Bucket, entry: Pick<ArchivedTaskEntry, "key" | "task_id">) {
  return (await archiveRecords(bucket, entry.key)).filter((r) => "task_id" in r && r.task_id === entry.task_id);
}

/** The task's view as it was when it moved, marked archived. */
export async function archivedTaskView(bucket: R2Bucket, entry: Pick<ArchivedTaskEntry, "key" | "task_id">): Promise<TaskView> {
  const task = (await archivedTaskRecords(bucket, entry)).find((r) => r.type === "task");
  if (!task || task.type !== "task" || !task.view) throw archiveUnavailable(entry.key, `without task ${entry.task_id}`);
  return { ...task.view, archived: true };
}

/** The archived task's questions, oldest first, as read from D1 before it moved. */
export async function archivedInterventions(bucket: R2Bucket, entry: Pick<ArchivedTaskEntry, "key" | "task_id">): Promise<InterventionRow[]> {
  return (await archivedTaskRecords(bucket, entry))
    .flatMap((r) => (r.type === "intervention" ? [rowOf(interventions, r.row)] : []))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** The archived task's notes, oldest first. */
export async function archivedNotes(bucket: R2Bucket, entry: Pick<ArchivedTaskEntry, "key" | "task_id">): Promise<NoteRow[]> {
  return (await archivedTaskRecords(bucket, entry))
    .flatMap((r) => (r.type === "note" ? [rowOf(taskNotes, r.row)] : []))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** The archived task's events in seq order. */
export async function archivedTaskEvents(bucket: R2Bucket, entry: Pick<ArchivedTaskEntry, "key" | "task_id">): Promise<EventView[]> {
  return (await archivedTaskRecords(bucket, entry)).flatMap((r) => (r.type === "event" ? [r.event] : [])).sort((a, b) => a.seq - b.seq);
}

/** A task's timeline wherever it is: from its object when archived, else from D1. */
export async function taskTimeline(d1: D1Database, bucket: R2Bucket, projectId: string, taskId: string, limit: number): Promise<EventView[]> {
  const entry = await d1
    .prepare("SELECT key, task_id FROM archived_tasks WHERE task_id = ?1 AND project_id = ?2")
    .bind(taskId, projectId)
    .first<ArchivedTaskEntry>();
  return entry ? (await archivedTaskEvents(bucket, entry)).slice(0, limit) : liveTaskEvents(d1, projectId, taskId, limit);
}

/**
 * The project's events after `since`, at most `limit`, in seq order, from D1 and the archive. Archived batches are
 * opened in the order of their first seq, only while they may still hold one of the `limit` first events. A batch's
 * range spans its tasks' (a long-lived task widens it), so many may reach past `since`: beyond the first
 * OBJECTS_PER_PAGE opened, the page stops short, at the first seq of the next batch it did not open, once it holds an
 * event before that seq. The next page then goes on from there, so the work per page is bounded.
 */
export async function eventsSince(d1: D1Database, bucket: R2Bucket, projectId: string, since: number, limit: number): Promise<EventView[]> {
  const live = await liveEventsSince(d1, projectId, since, limit);
  // With a full page from D1, nothing after its last seq can be among the first `limit`.
  const upTo = live.length === limit ? live.at(-1)!.seq : Number.MAX_SAFE_INTEGER;
  const { results: batches } = await d1
    .prepare(
      `SELECT key, seq_min FROM archive_batches WHERE project_id = ?1 AND kind = 'tasks' AND step = 'done' AND seq_max > ?2 AND seq_min <= ?3
       ORDER BY seq_min`,
    )
    .bind(projectId, since, upTo)
    .all<{ key: string; seq_min: number }>();
  let archived: EventView[] = [];
  let before = Number.MAX_SAFE_INTEGER;
  for (const [opened, batch] of batches.entries()) {
    // The first `limit` found so far all come before this batch's first seq: it can add none of them.
    if (archived.length >= limit && archived[limit - 1]!.seq < batch.seq_min) break;
    // Enough opened for one page: stop short of this batch, if that leaves something to answer.
    if (opened >= OBJECTS_PER_PAGE && Math.min(archived[0]?.seq ?? Infinity, live[0]?.seq ?? Infinity) < batch.seq_min) {
      before = batch.seq_min;
      break;
    }
    const events = (await archiveRecords(bucket, batch.key)).flatMap((r) =>
      r.type === "event" && r.event.seq > since && r.event.seq <= upTo ? [r.event] : [],
    );
    archived = [...archived, ...events].sort((a, b) => a.seq - b.seq);
  }
  return mergeBySeq(
    live.filter((e) => e.seq < before),
    archived.filter((e) => e.seq < before),
    since,
    limit,
  );
}
