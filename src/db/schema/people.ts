/** People, their sign-in, the MCP clients they allowed, and the projects they belong to. */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { ProjectSettings } from "../../domain/project-settings";

export const ROLES = ["admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];
/** What a membership of a project names: it can lower a person's role there, never raise it. */
export const PROJECT_ROLES = ["member", "viewer"] as const;

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  name: text("name"),
  role: text("role", { enum: ROLES }).notNull(),
  /** Null for accounts that only sign in through the external identity provider. */
  passwordHash: text("password_hash"),
  /** Set when an admin deactivates the account: from then on none of its tokens, keys or sockets is honoured. */
  deactivatedAt: text("deactivated_at"),
  /** Up to when the person has seen their inbox: what arrived later counts as unread (in the navigation and the tab title). */
  inboxSeenAt: text("inbox_seen_at"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** All tokens descended from one login share a family; reuse of a rotated one revokes it. */
    familyId: text("family_id").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
    rotatedAt: text("rotated_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("refresh_tokens_family").on(t.familyId)],
);

/**
 * The MCP clients a person authorised through OAuth, one row per grant of the OAuth library (whose own records live in
 * OAUTH_KV). This row is what makes a grant live: a token of a grant without one is refused, at the token endpoint and
 * at /mcp, so deleting the row (or the person, by cascade) stops the client at once, whatever KV still holds.
 */
export const mcpClientGrants = sqliteTable(
  "mcp_client_grants",
  {
    grantId: text("grant_id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    clientId: text("client_id").notNull(),
    /** As the client registered itself: unverified. */
    clientName: text("client_name"),
    createdAt: text("created_at").notNull(),
    /** Until the code is exchanged, the code's lifetime; after, the refresh token's. */
    expiresAt: text("expires_at").notNull(),
    /** Recorded at most once a minute. */
    lastUsedAt: text("last_used_at"),
  },
  (t) => [index("mcp_client_grants_user").on(t.userId)],
);

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  description: text("description"),
  /** What the project's admins chose (src/domain/project-settings.ts); a setting left out is at its default. */
  settings: text("settings", { mode: "json" })
    .$type<Partial<ProjectSettings>>()
    .notNull()
    .default(sql`'{}'`),
  createdBy: text("created_by"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  /** The D1 binding of the shard its tasks live on (src/db/shards.ts): chosen at creation, changed only by a move. */
  shard: text("shard").notNull().default("DB"),
  /** While an admin's move runs: the shard it goes to (its writes answer 503 until the move ends). */
  movingTo: text("moving_to"),
});

export const projectMembers = sqliteTable(
  "project_members",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Lowers, never raises, the user's global role in this project. */
    role: text("role", { enum: PROJECT_ROLES }).notNull().default("member"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index("project_members_user").on(t.userId)],
);

export const registrationTokens = sqliteTable("registration_tokens", {
  id: text("id").primaryKey(),
  name: text("name"),
  tokenHash: text("token_hash").notNull().unique(),
  expiresAt: text("expires_at").notNull(),
  maxUses: integer("max_uses").notNull(),
  uses: integer("uses").notNull().default(0),
  /** Projects a server registered with this token may see; null = all. */
  projectIds: text("project_ids", { mode: "json" }).$type<string[] | null>(),
  createdBy: text("created_by"),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
});
