import type { Db } from "./client";
import { fillPlaceholders, getTableName, sql, type AnyColumn, type Placeholder } from "drizzle-orm";

/**
 * A column written as "table"."column". Drizzle leaves columns of
 * single-table queries unqualified, and inside a correlated subquery an
 * unqualified name is captured by the subquery's own tables.
 */
export const qualified = (column: AnyColumn) => sql.raw(`"${getTableName(column.table)}"."${column.name}"`);

/**
 * `column IN (ids)` as a single bound parameter (a JSON array), so a list of
 * any length stays within D1's 100 parameters per query.
 */
export const inJsonList = (column: AnyColumn, ids: readonly string[] | Placeholder) =>
  sql`${column} IN (SELECT value FROM json_each(${Array.isArray(ids) ? JSON.stringify(ids) : ids}))`;

/**
 * A query built once per drizzle instance and then only bound: building a
 * query with drizzle costs far more CPU than binding one (about half a
 * millisecond for a task view).
 */
export function builtOnce<Q>(build: (db: Db) => Q): (db: Db) => Q {
  const built = new WeakMap<Db, Q>();
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, (query = build(db)));
    return query;
  };
}

/** A query from `builtOnce`, prepared with placeholders. */
interface PreparedQuery {
  getQuery(): { sql: string; params: unknown[] };
  mapAllResult(result: unknown, isFromBatch?: boolean): unknown;
}

/**
 * A query built once, bound to `values` as a statement for `D1Database.batch`,
 * and how to read its result. Batch rows come keyed by column name and are
 * mapped by position: `columns` is how many the query selects, so that a
 * repeated name (which would shift every value after it) fails loudly.
 */
export function boundForBatch<Row>(prepared: PreparedQuery, d1: D1Database, values: Record<string, unknown>, columns: number) {
  const { sql: text, params } = prepared.getQuery();
  return {
    statement: d1.prepare(text).bind(...fillPlaceholders(params, values)),
    read: (result: D1Result): Row[] => {
      const [first] = result.results as Record<string, unknown>[];
      if (first && Object.keys(first).length !== columns) throw new Error("two selected columns share a name");
      return prepared.mapAllResult(result, true) as Row[];
    },
  };
}
