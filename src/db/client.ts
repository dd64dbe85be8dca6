import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

/** `onQuery` hears of every statement drizzle sends to D1 (one round trip each). */
export const createDb = (d1: D1Database, onQuery?: () => void) =>
  drizzle(d1, { schema, ...(onQuery ? { logger: { logQuery: onQuery } } : {}) });
export type Db = ReturnType<typeof createDb>;

const workerDbs = new WeakMap<D1Database, Db>();
/** The Worker's drizzle instance for a D1 binding: built once per isolate, since building it walks the whole schema. */
export function dbOf(d1: D1Database): Db {
  let db = workerDbs.get(d1);
  if (!db) workerDbs.set(d1, (db = createDb(d1)));
  return db;
}

export type UserRow = typeof schema.users.$inferSelect;
export type ProjectRow = typeof schema.projects.$inferSelect;
export type ServerRow = typeof schema.servers.$inferSelect;
export type SessionRow = typeof schema.sessions.$inferSelect;

export const nowIso = () => new Date().toISOString();
