import { getTableName, sql, type AnyColumn } from "drizzle-orm";

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
export const inJsonList = (column: AnyColumn, ids: readonly string[]) =>
  sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
