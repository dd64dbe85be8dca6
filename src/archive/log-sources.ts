/**
 * The permission log and webhook deliveries as archive sources: entries (deliveries that are over, with their
 * attempts) older than the cutoff, a day at a time. Neither changes once it is due, so a count is its fingerprint.
 */
import { BATCH_LIMIT, dayOf } from "./plan";
import type { ArchiveRecord, Row } from "./records";
import { inOpenBatch, type ArchiveSource } from "./sources";

const ids = (list: readonly string[]) => JSON.stringify(list);

/** The day of the oldest due entry, then that day's due entries (oldest first), at most a batch. */
async function dueOfDay(d1: D1Database, projectId: string, sql: string, cutoff: string) {
  const { results } = await d1.prepare(sql).bind(projectId, cutoff, BATCH_LIMIT).all<{ id: string; created_at: string }>();
  const first = results[0];
  if (!first) return null;
  const day = dayOf(first.created_at);
  return { day, ids: results.filter((r) => dayOf(r.created_at) === day).map((r) => r.id) };
}

export function permissionLogSource(d1: D1Database, projectId: string): ArchiveSource {
  const fingerprint = (list: readonly string[]) =>
    d1
      .prepare("SELECT count(*) || '' AS fingerprint FROM permission_log WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))")
      .bind(projectId, ids(list));
  return {
    kind: "permission_log",
    due: (cutoff) =>
      dueOfDay(
        d1,
        projectId,
        `SELECT id, created_at FROM permission_log WHERE project_id = ?1 AND created_at < ?2 AND id NOT IN ${inOpenBatch("permission_log")}
         ORDER BY created_at, id LIMIT ?3`,
        cutoff,
      ),
    async gather(list) {
      const [rows, print] = await d1.batch([
        d1
          .prepare("SELECT * FROM permission_log WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY created_at, id")
          .bind(projectId, ids(list)),
        fingerprint(list),
      ]);
      const records: ArchiveRecord[] = (rows!.results as Row[]).map((row) => ({ type: "permission_log", row }));
      return { records, fingerprint: (print!.results[0] as { fingerprint: string }).fingerprint, seqs: [] };
    },
    fingerprint: async (list) => (await fingerprint(list).first<{ fingerprint: string }>())!.fingerprint,
    deletions: (list) => [
      d1.prepare("DELETE FROM permission_log WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))").bind(projectId, ids(list)),
    ],
  };
}

export function deliverySource(d1: D1Database, projectId: string): ArchiveSource {
  const fingerprint = (list: readonly string[]) =>
    d1
      .prepare(
        `SELECT count(*) || ':' || ifnull(group_concat(status), '') || ':' || (SELECT count(*) FROM delivery_attempts WHERE outbox_id IN (SELECT value FROM json_each(?2))) AS fingerprint
         FROM outbox WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))`,
      )
      .bind(projectId, ids(list));
  return {
    kind: "deliveries",
    due: (cutoff) =>
      dueOfDay(
        d1,
        projectId,
        `SELECT id, created_at FROM outbox WHERE project_id = ?1 AND status != 'pending' AND created_at < ?2 AND id NOT IN ${inOpenBatch("deliveries")}
         ORDER BY created_at, id LIMIT ?3`,
        cutoff,
      ),
    async gather(list) {
      const [rows, attempts, print] = await d1.batch([
        d1.prepare("SELECT * FROM outbox WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY created_at, id").bind(projectId, ids(list)),
        d1.prepare("SELECT * FROM delivery_attempts WHERE outbox_id IN (SELECT value FROM json_each(?1)) ORDER BY outbox_id, attempt, id").bind(ids(list)),
        fingerprint(list),
      ]);
      const byDelivery = Map.groupBy(attempts!.results as Row[], (a) => a.outbox_id as string);
      const records: ArchiveRecord[] = (rows!.results as Row[]).map((row) => ({ type: "delivery", row, attempts: byDelivery.get(row.id as string) ?? [] }));
      return { records, fingerprint: (print!.results[0] as { fingerprint: string }).fingerprint, seqs: [] };
    },
    fingerprint: async (list) => (await fingerprint(list).first<{ fingerprint: string }>())!.fingerprint,
    // The attempts go with their delivery (foreign key).
    deletions: (list) => [d1.prepare("DELETE FROM outbox WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))").bind(projectId, ids(list))],
  };
}
