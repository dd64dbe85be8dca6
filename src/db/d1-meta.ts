/**
 * D1's own count of the rows a call read and wrote (its `meta`), for calls
 * whose answers drop it: `first()` and `raw()`. Both are run as `all()`,
 * which carries the meta, and their answers are rebuilt from it exactly as
 * D1 builds them:
 * - `first()` is, in D1's own code, the first object of `all()`'s answer.
 * - `raw()` rows are `all()`'s objects' values only where every column has a
 *   name of its own that an object keeps in place: a join's duplicate names
 *   collapse into one key, and a name like "1" is moved ahead of the others.
 *   So the first `raw()` of each query in an isolate runs as itself, with
 *   the column names, and teaches whether its rows can be rebuilt; a query
 *   whose rows cannot runs as `raw()` always. Those calls are reported as
 *   uncounted rather than guessed.
 */

export interface RowCounts {
  rowsRead: number;
  rowsWritten: number;
  /** Calls whose rows D1 did not report (a query's first raw() in this isolate, one raw() cannot be rebuilt for, exec). */
  uncounted: number;
}

type Row = Record<string, unknown>;

/** Adds a call's meta to the counts. */
export function heard(counts: RowCounts | undefined, meta: { rows_read?: number; rows_written?: number } | undefined) {
  if (!counts) return;
  if (!meta || typeof meta.rows_read !== "number") counts.uncounted++;
  else {
    counts.rowsRead += meta.rows_read;
    counts.rowsWritten += meta.rows_written ?? 0;
  }
}

/** What `first(column?)` answers, from the same statement's `all()` answer (D1's own rule, and its error). */
export function firstOf(results: Row[], column?: string): unknown {
  if (results.length === 0) return null;
  const row = results[0]!;
  if (column === undefined) return row;
  if (row[column] === undefined) throw new Error(`D1_COLUMN_NOTFOUND: Column not found (${column})`, { cause: new Error("Column not found") });
  return row[column];
}

/** An object keeps a key that reads as an array index ahead of the others, whatever its place among the columns. */
const INDEX_LIKE = /^(0|[1-9]\d*)$/;
const rebuildable = (columns: string[]) => new Set(columns).size === columns.length && !columns.some((c) => INDEX_LIKE.test(c));

/** Per query text: whether its raw() rows can be rebuilt from all(). Bounded: queries built with a varying number of values are many. */
const shapes = new Map<string, boolean>();
const MAX_SHAPES = 1000;

interface Runs {
  all(): Promise<D1Result<Row>>;
  raw(options?: { columnNames?: boolean }): Promise<unknown[][]>;
}

/** What `raw(options)` answers, counted where it can be exactly. */
export async function countedRaw(
  statement: Runs,
  query: string,
  options: { columnNames?: boolean } | undefined,
  counts: RowCounts | undefined,
): Promise<unknown[][]> {
  const known = shapes.get(query);
  // The names alone are not in all()'s answer when it has no rows: such calls (the hub makes none) run as they are.
  if (options?.columnNames || known === false) {
    heard(counts, undefined);
    return statement.raw(options as { columnNames: true });
  }
  if (known === true) {
    const { results, meta } = await statement.all();
    heard(counts, meta);
    return results.map((r) => Object.values(r));
  }
  // The first time: learn the columns from raw() itself, and answer from it.
  const [columns, ...rows] = await statement.raw({ columnNames: true });
  if (columns) {
    if (shapes.size >= MAX_SHAPES) shapes.clear();
    shapes.set(query, rebuildable(columns as string[]));
  }
  heard(counts, undefined);
  return rows;
}
