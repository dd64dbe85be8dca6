import type { Db } from "./client";
import { getTableName, sql, type AnyColumn, type Placeholder } from "drizzle-orm";

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
