/** Answers kept for requests repeated under an Idempotency-Key. */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** "user:<id>" or "server:<id>": keys never collide across callers. */
    caller: text("caller").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** Null while the first request is still being handled. */
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    responseContentType: text("response_content_type"),
    /** The answer holds a secret a replay hands out again: the body is sealed under DATA_KEY. */
    sealed: integer("sealed", { mode: "boolean" }).notNull().default(false),
    /** The project access the first request was granted (src/auth/access.ts): a replay is answered only to a caller granted it still. */
    scope: text("scope", { mode: "json" }).$type<{ project_id: string; access: "read" | "write"; what: string }[]>(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);
