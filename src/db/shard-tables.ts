/**
 * Which tables hold a project's rows on its shard, how each finds them, and in what order a move copies them: read
 * from the schema itself, so a table added later is moved too (test-node/shard-tables.test.ts fails on one it cannot
 * place). The directory's tables never move; a table of the project's is found by its project_id, or through the
 * table its foreign key points at; parents are copied before the rows that point at them, and deleted after.
 */
import { Column } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";

/** Rows of the directory (people, servers, keys, memberships, chat links and channels): written per person or server, never moved. */
export const DIRECTORY_TABLES: ReadonlySet<string> = new Set([
  "users",
  "refresh_tokens",
  "mcp_client_grants",
  "projects",
  "project_members",
  "registration_tokens",
  "idempotency_keys",
  "servers",
  "access_grants",
  "personal_access_tokens",
  "invites",
  "telegram_links",
  "telegram_link_codes",
  "telegram_bot",
  "slack_installations",
  "slack_links",
  // The channels projects post to: kept with the chat links, where a channel's lane and its commands read them.
  "slack_channels",
  "slack_link_codes",
  "slack_oauth_states",
  // Rules scoped to the whole hub, a server or a project, read by daemons across projects.
  "approval_rules",
]);

export interface MovedTable {
  name: string;
  /** Its primary key's columns: a copy made again is an upsert on them. */
  keys: string[];
  /** SQL selecting the project's rows (?1 the project's id). */
  where: string;
}

interface Shape {
  name: string;
  columns: string[];
  keys: string[];
  /** Column → the table and column it points at. */
  parents: Map<string, { table: string; column: string }>;
}

function shapeOf(table: SQLiteTable): Shape {
  const config = getTableConfig(table);
  const primary = config.primaryKeys[0]?.columns.map((c) => c.name) ?? config.columns.filter((c) => c.primary).map((c) => c.name);
  // A table without a primary key (slack_posts) is copied by a unique index of columns that are never null.
  const unique = config.indexes.find((i) => i.config.unique && i.config.columns.every((c) => c instanceof Column && c.notNull));
  const keys = primary.length > 0 ? primary : (unique?.config.columns.map((c) => (c as Column).name) ?? []);
  const parents = new Map<string, { table: string; column: string }>();
  for (const fk of config.foreignKeys) {
    const ref = fk.reference();
    if (ref.columns.length === 1) parents.set(ref.columns[0]!.name, { table: getTableConfig(ref.foreignTable).name, column: ref.foreignColumns[0]!.name });
  }
  return { name: config.name, columns: config.columns.map((c) => c.name), keys, parents };
}

/** The rows of the project in `shape`: by its project_id, else through a parent that has one (or a parent of that). */
function whereOf(shape: Shape, shapes: Map<string, Shape>, depth = 0): string | null {
  if (shape.columns.includes("project_id")) return "project_id = ?1";
  if (depth > 3) return null;
  for (const [column, parent] of shape.parents) {
    const of = shapes.get(parent.table);
    if (!of || DIRECTORY_TABLES.has(of.name) || of.name === shape.name) continue;
    const inner = whereOf(of, shapes, depth + 1);
    if (inner) return `"${column}" IN (SELECT "${parent.column}" FROM "${of.name}" WHERE ${inner})`;
  }
  return null;
}

/** Tables derived from others by triggers (roll-ups): copied last, so that their copy sets what the triggers added. */
export const derivedLast = (name: string) => /_rollup$|_counts$|_durations$/.test(name);

function catalogue(): { moved: MovedTable[]; unplaced: string[] } {
  const shapes = new Map<string, Shape>();
  for (const value of Object.values(schema)) if (value instanceof SQLiteTable) shapes.set(getTableConfig(value).name, shapeOf(value));
  const own = [...shapes.values()].filter((s) => !DIRECTORY_TABLES.has(s.name));
  const unplaced = own.filter((s) => whereOf(s, shapes) === null || s.keys.length === 0).map((s) => s.name);
  // Parents first: a table comes after every table of the project its foreign keys point at.
  const ordered: Shape[] = [];
  const visit = (s: Shape, path: Set<string>) => {
    if (ordered.includes(s) || path.has(s.name)) return;
    path.add(s.name);
    for (const parent of s.parents.values()) {
      const p = shapes.get(parent.table);
      if (p && p !== s && own.includes(p)) visit(p, path);
    }
    ordered.push(s);
  };
  for (const s of own.filter((s) => !unplaced.includes(s.name)).sort((a, b) => a.name.localeCompare(b.name))) visit(s, new Set());
  const moved = [...ordered.filter((s) => !derivedLast(s.name)), ...ordered.filter((s) => derivedLast(s.name))];
  return { moved: moved.map((s) => ({ name: s.name, keys: s.keys, where: whereOf(s, shapes)! })), unplaced };
}

const built = catalogue();
/** The project's tables, in the order a move copies them (and deletes them, backwards). */
export const MOVED_TABLES: readonly MovedTable[] = built.moved;
/** Tables of the project's that cannot be found by project (none may be; the test names them). */
export const UNPLACED_TABLES: readonly string[] = built.unplaced;
