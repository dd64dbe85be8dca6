/**
 * A project's whole history as one gzip NDJSON object: a first line saying what it is, then the archived tasks'
 * objects as they are (batches in order), then the rows still in D1 (tasks, dependencies, notes, questions, usage,
 * reviews, and the events of the log) in the records' shape (records.ts). Kept as a DataRef of the project, so it
 * is downloaded by a signed URL like any other. Built by the project's room while its archiver waits, so no row is
 * seen both in D1 and in an object, or in neither.
 */
import { blobKey, completeDatarefRow } from "../datarefs/blobs";
import { gunzipText, linesOf, NdjsonGzip } from "./codec";
import { TASK_CHILDREN, type ArchiveRecord, type Row } from "./records";
import { liveEventsSince } from "./task-events";

const PAGE = 500;
export const EXPORT_CONTENT_TYPE = "application/gzip";

/** Rows of a project's table, a page at a time along `order` (a unique key). */
async function* pages(d1: D1Database, sql: string, projectId: string): AsyncGenerator<Row[]> {
  for (let offset = 0; ; offset += PAGE) {
    const { results } = await d1.prepare(`${sql} LIMIT ?2 OFFSET ?3`).bind(projectId, PAGE, offset).all<Row>();
    if (results.length) yield results;
    if (results.length < PAGE) return;
  }
}

export async function writeHistory(d1: D1Database, bucket: R2Bucket, projectId: string, out: NdjsonGzip) {
  await out.write([{ type: "export", project_id: projectId, created_at: new Date().toISOString() }]);
  const { results: batches } = await d1
    .prepare("SELECT key FROM archive_batches WHERE project_id = ?1 AND kind = 'tasks' AND step = 'done' ORDER BY created_at, id")
    .bind(projectId)
    .all<{ key: string }>();
  for (const { key } of batches) {
    const object = await bucket.get(key);
    if (!object) throw new Error(`archive object ${key} is missing`);
    const text = await gunzipText(await object.arrayBuffer());
    await out.writeText(text, linesOf(text).length);
  }
  for await (const rows of pages(d1, "SELECT * FROM tasks WHERE project_id = ?1 ORDER BY id", projectId)) {
    await out.write(rows.map((row): ArchiveRecord => ({ type: "task", task_id: row.id as string, row })));
  }
  for (const { table, type, order } of TASK_CHILDREN) {
    // Questions asked outside any task are the project's too.
    const sql = `SELECT * FROM ${table} WHERE project_id = ?1 ORDER BY ${order}`;
    for await (const rows of pages(d1, sql, projectId)) {
      await out.write(rows.map((row) => ({ type, task_id: row.task_id as string | null, row })));
    }
  }
  for (let since = 0; ;) {
    const events = await liveEventsSince(d1, projectId, since, PAGE);
    await out.write(events.map((event): ArchiveRecord => ({ type: "event", task_id: event.task_id, event })));
    if (events.length < PAGE) break;
    since = events.at(-1)!.seq;
  }
}

/** Builds the export and records it ready (or failed, saying why). */
export async function buildExport(d1: D1Database, bucket: R2Bucket, projectId: string, exportId: string) {
  try {
    const out = new NdjsonGzip();
    await writeHistory(d1, bucket, projectId, out);
    const { bytes, sha256 } = await out.close();
    const row = await d1.prepare("SELECT requested_by FROM project_exports WHERE id = ?1").bind(exportId).first<{ requested_by: string }>();
    const dataref = completeDatarefRow({
      id: crypto.randomUUID(),
      projectId,
      contentType: EXPORT_CONTENT_TYPE,
      size: bytes.byteLength,
      sha256,
      filename: `history-${exportId}.ndjson.gz`,
      createdBy: row?.requested_by ?? "system",
    });
    await bucket.put(blobKey(projectId, dataref.id), bytes, { sha256, httpMetadata: { contentType: EXPORT_CONTENT_TYPE } });
    await d1.batch([
      d1
        .prepare(
          `INSERT INTO datarefs (id, project_id, status, content_type, size, sha256, filename, created_by, created_at, upload_expires_at, completed_at)
           VALUES (?1, ?2, 'complete', ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?8)`,
        )
        .bind(dataref.id, projectId, dataref.contentType, dataref.size, sha256, dataref.filename, dataref.createdBy, dataref.createdAt),
      d1
        .prepare("UPDATE project_exports SET status = 'ready', dataref_id = ?2, size = ?3, completed_at = ?4 WHERE id = ?1")
        .bind(exportId, dataref.id, dataref.size, dataref.completedAt),
    ]);
  } catch (e) {
    await d1
      .prepare("UPDATE project_exports SET status = 'failed', error = ?2, completed_at = ?3 WHERE id = ?1")
      .bind(exportId, e instanceof Error ? e.message : String(e), new Date().toISOString())
      .run();
    throw e;
  }
}
