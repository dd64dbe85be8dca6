import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export const createDb = (d1: D1Database) => drizzle(d1, { schema });
export type Db = ReturnType<typeof createDb>;

export type UserRow = typeof schema.users.$inferSelect;
export type ProjectRow = typeof schema.projects.$inferSelect;
export type ServerRow = typeof schema.servers.$inferSelect;
export type SessionRow = typeof schema.sessions.$inferSelect;

export const nowIso = () => new Date().toISOString();
