/**
 * Rows copied between shards as they are (a mirror of a directory row, a project's rows on its move): an upsert by
 * primary key, so a copy made again (a move resumed after a crash) changes nothing. Never INSERT OR REPLACE: a
 * replace deletes the row first, and its cascades would take the rows that hang from it.
 */

export type Row = Record<string, unknown>;

const NAME = /^[a-z_][a-z0-9_]*$/;
const quoted = (name: string) => {
  if (!NAME.test(name)) throw new Error(`not a column name: ${name}`);
  return `"${name}"`;
};

/** One upsert statement per row (`keys`: the table's primary key columns). */
export function upsertStatements(d1: D1Database, table: string, keys: readonly string[], rows: readonly Row[]): D1PreparedStatement[] {
  return rows.map((row) => {
    const columns = Object.keys(row);
    const rest = columns.filter((c) => !keys.includes(c));
    const update = rest.length > 0 ? `DO UPDATE SET ${rest.map((c) => `${quoted(c)} = excluded.${quoted(c)}`).join(", ")}` : "DO NOTHING";
    return d1
      .prepare(
        `INSERT INTO ${quoted(table)} (${columns.map(quoted).join(", ")}) VALUES (${columns.map((_, i) => `?${i + 1}`).join(", ")}) ` +
          `ON CONFLICT (${keys.map(quoted).join(", ")}) ${update}`,
      )
      .bind(...columns.map((c) => row[c] ?? null));
  });
}
