/** People's personal access tokens: bearer credentials for clients (MCP, A2A, scripts) that cannot sign in. */
import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { users } from "./people";

export const TOKEN_SCOPES = ["read", "write"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * A token acts as its person, narrowed: `scope` read makes every project read-only, `project_ids` hides every other
 * project (null: whatever the person can see at each use). Only the token's sha256 is kept; revoking sets `revoked_at`
 * (the row stays, so a revoked token is refused as revoked rather than as unknown), and deleting the person deletes it.
 */
export const personalAccessTokens = sqliteTable(
  "personal_access_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    scope: text("scope", { enum: TOKEN_SCOPES }).notNull(),
    projectIds: text("project_ids", { mode: "json" }).$type<string[] | null>(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
    /** Written at most once a minute. */
    lastUsedAt: text("last_used_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("personal_access_tokens_user").on(t.userId)],
);
