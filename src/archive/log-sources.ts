/**
 * The permission log and webhook deliveries as archive sources: entries (deliveries that are over, with their
 * attempts) older than the cutoff, a day at a time. A count (and the deliveries' statuses) is their fingerprint; a delivery made
 * pending again (a redelivery) after its batch was recorded is no longer due, and stays.
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

const PERMISSION_LOG_FINGERPRINT = "(SELECT count(*) || '' FROM permission_log WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)))";

export function permissionLogSource(d1: D1Database, projectId: string): ArchiveSource {
  const fingerprint = (list: readonly string[]) => d1.prepare(`SELECT ${PERMISSION_LOG_FINGERPRINT} AS fingerprint`).bind(projectId, ids(list));
  return {
    kind: "permission_log",
    fingerprintSql: PERMISSION_LOG_FINGERPRINT,
    notDueSql: `SELECT j.value FROM json_each(?2) j WHERE NOT EXISTS (SELECT 1 FROM permission_log l WHERE l.id = j.value AND l.project_id = ?1 AND l.created_at < ?3)`,
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
    deletions: (list, guard) => [
      d1.prepare(`DELETE FROM permission_log WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND ${guard}`).bind(projectId, ids(list)),
    ],
  };
}

const DELIVERY_FINGERPRINT = `(SELECT count(*) || ':' || ifnull(group_concat(status), '') || ':' || (SELECT count(*) FROM delivery_attempts WHERE outbox_id IN (SELECT value FROM json_each(?2)))
  FROM outbox WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)))`;

export function deliverySource(d1: D1Database, projectId: string): ArchiveSource {
  const fingerprint = (list: readonly string[]) => d1.prepare(`SELECT ${DELIVERY_FINGERPRINT} AS fingerprint`).bind(projectId, ids(list));
  return {
    kind: "deliveries",
    fingerprintSql: DELIVERY_FINGERPRINT,
    // A redelivery makes a delivery pending again: it stays until it is over once more.
    notDueSql: `SELECT j.value FROM json_each(?2) j WHERE NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = j.value AND o.project_id = ?1 AND o.status != 'pending' AND o.created_at < ?3)`,
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
    // The attempts go with their delivery (foreign key).
    deletions: (list, guard) => [
      d1.prepare(`DELETE FROM outbox WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND ${guard}`).bind(projectId, ids(list)),
    ],
  };
}
