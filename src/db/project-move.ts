/**
 * A project's rows copied from one shard to another, and deleted from the first, in steps of at most `limit` rows:
 * each step reads where the last one stopped (a table and the last primary key copied) and hands back where the next
 * starts, in primary key order (some tables have no rowid), so a move
 * killed between steps goes on from its last recorded step. A copy is an upsert by primary key, so a step made twice
 * (killed after its batch, before its position was recorded) writes the same rows again and nothing more.
 */
import { upsertStatements, type Row } from "./row-copy";
import { derivedLast, MOVED_TABLES } from "./shard-tables";

/** Where a move stands: copying table `table` after the row whose primary key is `after`, then deleting backwards. */
export interface MovePosition {
  phase: "copy" | "delete";
  table: number;
  after: unknown[] | null;
}

export const MOVE_START: MovePosition = { phase: "copy", table: 0, after: null };

/** Foreign keys are checked when the batch commits: a task may point at one copied later in the same table. */
const DEFER = "PRAGMA defer_foreign_keys = on";

/** One step of the copy: the next rows of the current table, or on to the next table. Null once every table is copied. */
export async function copyStep(from: D1Database, to: D1Database, projectId: string, at: MovePosition, limit: number): Promise<MovePosition | null> {
  const table = MOVED_TABLES[at.table];
  if (!table) return null;
  const keys = table.keys.map((k) => `"${k}"`).join(", ");
  const past = at.after ? `AND (${keys}) > (${at.after.map((_, i) => `?${i + 3}`).join(", ")})` : "";
  const { results } = await from
    .prepare(`SELECT * FROM "${table.name}" WHERE (${table.where}) ${past} ORDER BY ${keys} LIMIT ?2`)
    .bind(projectId, limit, ...(at.after ?? []))
    .all<Row>();
  // A roll-up's rows on the target are the source's exactly: those its triggers added as the rows above were copied go
  // (keyed by when each row last changed, they need not match the source's keys), in the batch of its first rows.
  const clear = at.after === null && derivedLast(table.name) ? [to.prepare(`DELETE FROM "${table.name}" WHERE ${table.where}`).bind(projectId)] : [];
  if (results.length === 0) {
    if (clear.length > 0) await to.batch(clear);
    return { phase: "copy", table: at.table + 1, after: null };
  }
  await to.batch([to.prepare(DEFER), ...clear, ...upsertStatements(to, table.name, table.keys, results)]);
  const last = results.at(-1)!;
  return { phase: "copy", table: at.table, after: table.keys.map((k) => last[k]) };
}

/**
 * One step of the delete on the old shard: up to `limit` rows of the current table, children before their parents
 * (the tables backwards). Null once none is left.
 */
export async function deleteStep(from: D1Database, projectId: string, at: MovePosition, limit: number): Promise<MovePosition | null> {
  const index = MOVED_TABLES.length - 1 - at.table;
  const table = MOVED_TABLES[index];
  if (!table) return null;
  const keys = table.keys.map((k) => `"${k}"`).join(", ");
  const [, deleted] = await from.batch([
    from.prepare(DEFER),
    from.prepare(`DELETE FROM "${table.name}" WHERE (${keys}) IN (SELECT ${keys} FROM "${table.name}" WHERE ${table.where} LIMIT ?2)`).bind(projectId, limit),
  ]);
  return (deleted!.meta.changes ?? 0) < limit ? { phase: "delete", table: at.table + 1, after: null } : at;
}

/** How many rows of the project each table holds on a shard (what a move's test compares before and after). */
export async function rowCounts(d1: D1Database, projectId: string): Promise<Record<string, number>> {
  const results = await d1.batch(MOVED_TABLES.map((t) => d1.prepare(`SELECT count(*) AS n FROM "${t.name}" WHERE ${t.where}`).bind(projectId)));
  return Object.fromEntries(MOVED_TABLES.map((t, i) => [t.name, Number((results[i]!.results[0] as { n: number }).n)]));
}
