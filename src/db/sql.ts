import { getTableName, sql, type AnyColumn } from "drizzle-orm";

/**
 * A column written as "table"."column". Drizzle leaves columns of
 * single-table queries unqualified, and inside a correlated subquery an
 * unqualified name is captured by the subquery's own tables.
 */
export const qualified = (column: AnyColumn) => sql.raw(`"${getTableName(column.table)}"."${column.name}"`);
