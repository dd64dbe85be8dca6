/**
 * A project's whole history as one gzip NDJSON object: a first line saying what it is, then the archived objects as
 * they are (tasks, then the permission log's, then the deliveries', batches in order), then the rows still in D1
 * (tasks, dependencies, notes, questions, usage, reviews, the events of the log, the permission log and the webhook
 * deliveries with their attempts) in the records' shape (records.ts). Built by the project's room while its archiver
 * waits, so no row is seen both in D1 and in an object, or in neither. Each table is read a page at a time along a
 * unique key (keyset, not offsets), so a row written meanwhile is never seen twice nor makes another missed; events
 * are those up to the log's head when it began. Streamed: it is written to R2 in multipart parts as it is made
 * (export-sink.ts), and each archived object is decompressed as it is read.
 *
 * The file is kept under its own prefix, not as a DataRef: only the export route hands out its URL.
 */
import { MultipartGzip } from "./export-sink";
import type { ArchiveRecord, Row } from "./records";
import { liveEventsSince } from "./task-events";

const PAGE = 500;
export const EXPORT_CONTENT_TYPE = "application/gzip";
/** An export pending longer than this was stopped with its room (evicted, redeployed): it is reported failed. */
export const EXPORT_TIMEOUT_MS = 30 * 60 * 1000;
/** Exports of one project being built at once, at most. */
export const EXPORTS_AT_ONCE = 2;

/** Where an export's file lives: apart from DataRefs (projects/…) and archives (archives/…), deleted with the project. */
export const exportKey = (projectId: string, exportId: string) => `exports/${projectId}/${exportId}.ndjson.gz`;
export const exportPrefix = (projectId: string) => `exports/${projectId}/`;

/**
 * Rows of a project's table, a page at a time along `key` (unique columns, their order), each page after the last
 * row of the one before: a row written meanwhile is read once or not at all, never twice, and none is skipped.
 */
async function* pages(d1: D1Database, table: string, key: readonly string[], projectId: string): AsyncGenerator<Row[]> {
  const order = key.join(", ");
  let after: unknown[] | null = null;
  for (;;) {
    const past: string = after ? `AND (${order}) > (${key.map((_, i) => `?${i + 3}`).join(", ")})` : "";
    const { results }: { results: Row[] } = await d1
      .prepare(`SELECT * FROM ${table} WHERE project_id = ?1 ${past} ORDER BY ${order} LIMIT ?2`)
      .bind(projectId, PAGE, ...(after ?? []))
      .all<Row>();
    if (results.length === 0) return;
    yield results;
    if (results.length < PAGE) return;
    const last: Row = results.at(-1)!;
    after = key.map((k) => last[k]);
  }
}

/** The tables read from D1, with the unique key each is paged along (questions asked outside any task are the project's too). */
const LIVE_TABLES = [
  { table: "tasks", type: "task" as const, key: ["created_at", "id"], taskId: "id" },
  { table: "task_dependencies", type: "dependency" as const, key: ["task_id", "depends_on_task_id"], taskId: "task_id" },
  { table: "task_notes", type: "note" as const, key: ["created_at", "id"], taskId: "task_id" },
  { table: "interventions", type: "intervention" as const, key: ["created_at", "id"], taskId: "task_id" },
  { table: "task_usage", type: "usage" as const, key: ["task_id"], taskId: "task_id" },
  { table: "code_reviews", type: "code_review" as const, key: ["task_id", "id"], taskId: "task_id" },
];

export async function writeHistory(d1: D1Database, bucket: R2Bucket, projectId: string, out: MultipartGzip) {
  // Where the log stood at the start: events after it are left out (their tasks may be too).
  const [head, batches] = await d1.batch([
    d1.prepare("SELECT ifnull(max(seq), 0) AS seq FROM events WHERE project_id = ?1").bind(projectId),
    d1
      .prepare(
        `SELECT key FROM archive_batches WHERE project_id = ?1 AND step = 'done'
         ORDER BY CASE kind WHEN 'tasks' THEN 0 WHEN 'permission_log' THEN 1 ELSE 2 END, created_at, id`,
      )
      .bind(projectId),
  ]);
  const logHead = (head!.results[0] as { seq: number }).seq;
  await out.write([{ type: "export", project_id: projectId, created_at: new Date().toISOString(), seq: logHead }]);
  for (const { key } of batches!.results as { key: string }[]) {
    const object = await bucket.get(key);
    if (!object) throw new Error(`archive object ${key} is missing`);
    await out.writeStream(object.body.pipeThrough(new DecompressionStream("gzip")) as ReadableStream<Uint8Array>);
  }
  for (const { table, type, key, taskId } of LIVE_TABLES) {
    for await (const rows of pages(d1, table, key, projectId)) {
      await out.write(rows.map((row) => ({ type, task_id: row[taskId] as string | null, row }) as ArchiveRecord));
    }
  }
  for (let since = 0; since < logHead;) {
    const events = (await liveEventsSince(d1, projectId, since, PAGE)).filter((e) => e.seq <= logHead);
    await out.write(events.map((event): ArchiveRecord => ({ type: "event", task_id: event.task_id, event })));
    if (events.length < PAGE) break;
    since = events.at(-1)!.seq;
  }
  for await (const rows of pages(d1, "permission_log", ["created_at", "id"], projectId)) {
    await out.write(rows.map((row): ArchiveRecord => ({ type: "permission_log", row })));
  }
  for await (const rows of pages(d1, "outbox", ["created_at", "id"], projectId)) {
    const { results: attempts } = await d1
      .prepare("SELECT * FROM delivery_attempts WHERE outbox_id IN (SELECT value FROM json_each(?1)) ORDER BY outbox_id, attempt, id")
      .bind(JSON.stringify(rows.map((r) => r.id)))
      .all<Row>();
    const byDelivery = Map.groupBy(attempts, (a) => a.outbox_id as string);
    await out.write(rows.map((row): ArchiveRecord => ({ type: "delivery", row, attempts: byDelivery.get(row.id as string) ?? [] })));
  }
}

/** Builds the export and records it ready (or failed, saying why). */
export async function buildExport(d1: D1Database, bucket: R2Bucket, projectId: string, exportId: string) {
  const out = new MultipartGzip(await bucket.createMultipartUpload(exportKey(projectId, exportId), { httpMetadata: { contentType: EXPORT_CONTENT_TYPE } }));
  try {
    await writeHistory(d1, bucket, projectId, out);
    const { size } = await out.close();
    await d1
      .prepare("UPDATE project_exports SET status = 'ready', size = ?2, completed_at = ?3 WHERE id = ?1 AND status = 'pending'")
      .bind(exportId, size, new Date().toISOString())
      .run();
  } catch (e) {
    await out.abort();
    await d1
      .prepare("UPDATE project_exports SET status = 'failed', error = ?2, completed_at = ?3 WHERE id = ?1")
      .bind(exportId, e instanceof Error ? e.message : String(e), new Date().toISOString())
      .run();
    throw e;
  }
}
