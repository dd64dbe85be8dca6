/**
 * Reads of tasks that moved to the archive (src/archive/): the fallback of a read by id that D1 no longer answers.
 * Every archive read of a request goes through `archiveDb`, the D1 database that holds the project's archive index.
 */
import { checkAccess, membershipIn } from "../auth/access";
import type { HubContext } from "../http/context";
import { Problem } from "../http/problem";
import { NotFound } from "../domain/errors";
import { archivedTaskEntry, archivedTaskView, type ArchivedTaskEntry } from "../archive/reads";
import type { TaskView } from "../views/tasks";
import { DIRECTORY, homeD1, shardDb } from "../db/shards";

/** The D1 database holding a project's archive index and batches: its shard. */
export const archiveDb = (c: HubContext, projectId: string): Promise<D1Database> => homeD1(c.env, projectId);

/** The archived task, if the caller may see its project; null when it is not archived (404 when hidden from the caller). */
export async function archivedTaskFor(c: HubContext, taskId: string): Promise<ArchivedTaskEntry | null> {
  const entry = await archivedTaskEntry(c.env, taskId);
  if (!entry) return null;
  checkAccess(c, entry.project_id, await membershipIn(c, entry.project_id), "read", "Task");
  // The rest of the request reads the task's project on its shard, as a live task's read does.
  if (entry.shard && entry.shard !== DIRECTORY) c.set("db", shardDb(c.env, entry.shard));
  c.set("logTask", taskId);
  c.set("logProject", entry.project_id);
  return entry;
}

/** `read` (a read of a task in D1), or, when that is 404, the archived task's entry; the 404 stands when it is not archived either. */
export async function liveOrArchived<T>(c: HubContext, taskId: string, read: () => Promise<T>): Promise<{ live: T } | { archived: ArchivedTaskEntry }> {
  try {
    return { live: await read() };
  } catch (e) {
    if (!((e instanceof Problem && e.status === 404) || e instanceof NotFound)) throw e;
    const archived = await archivedTaskFor(c, taskId);
    if (!archived) throw e;
    return { archived };
  }
}

/** The archived task's view (as it was when it moved, `archived: true`). */
export const archivedView = (c: HubContext, entry: ArchivedTaskEntry): Promise<TaskView> => archivedTaskView(c.env.BLOBS, entry);

/** The task's id and project for a read, from D1 or, when it moved there, from the archive. */
export async function readableTask(c: HubContext, taskId: string, read: () => Promise<{ id: string; projectId: string }>) {
  const found = await liveOrArchived(c, taskId, read);
  return "live" in found ? { ...found.live, archived: null } : { id: found.archived.task_id, projectId: found.archived.project_id, archived: found.archived };
}
