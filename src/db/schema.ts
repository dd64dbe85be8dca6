/**
 * D1 schema. Timestamps are ISO-8601 UTC strings (they sort correctly as text
 * and are what the API returns); ids are UUIDs; JSON columns hold protocol
 * objects exactly as accepted.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const ROLES = ["admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  name: text("name"),
  role: text("role", { enum: ROLES }).notNull(),
  /** Null for accounts that only sign in through the external identity provider. */
  passwordHash: text("password_hash"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
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

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  description: text("description"),
  createdBy: text("created_by"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const projectMembers = sqliteTable(
  "project_members",
  {
    projectId: text("project_id").notNull().references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
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

export const servers = sqliteTable("servers", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  hostname: text("hostname").notNull(),
  ip: text("ip"),
  os: text("os"),
  repos: text("repos", { mode: "json" }).$type<unknown>(),
  systemInfo: text("system_info", { mode: "json" }).$type<unknown>(),
  capabilities: text("capabilities", { mode: "json" }).$type<unknown>(),
  protocolVersions: text("protocol_versions", { mode: "json" }).$type<string[] | null>(),
  machineId: text("machine_id"),
  macAddress: text("mac_address"),
  /** sha256 of the current API key; null once revoked. */
  apiKeyHash: text("api_key_hash").unique(),
  apiKeyPrefix: text("api_key_prefix"),
  projectIds: text("project_ids", { mode: "json" }).$type<string[] | null>(),
  registrationTokenId: text("registration_token_id"),
  lastHeartbeat: text("last_heartbeat"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  revokedAt: text("revoked_at"),
});

export const SESSION_STATUSES = ["active", "closed"] as const;

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    serverId: text("server_id").notNull().references(() => servers.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull().references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    workingDirectory: text("working_directory"),
    agentType: text("agent_type"),
    status: text("status", { enum: SESSION_STATUSES }).notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    closedAt: text("closed_at"),
  },
  (t) => [
    index("sessions_project").on(t.projectId, t.status),
    // One open session of a given name per server; closed ones are history.
    uniqueIndex("sessions_open_name").on(t.serverId, t.name).where(sql`status = 'active'`),
  ],
);

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
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);
