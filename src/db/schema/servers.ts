/** Servers (the daemons' machines) and their sessions. */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects } from "./people";

export const servers = sqliteTable("servers", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  hostname: text("hostname").notNull(),
  ip: text("ip"),
  os: text("os"),
  repos: text("repos", { mode: "json" }).$type<unknown>(),
  systemInfo: text("system_info", { mode: "json" }).$type<unknown>(),
  /** As the daemon sent them (registration, heartbeats). */
  capabilities: text("capabilities", { mode: "json" }).$type<unknown>(),
  /** As an admin declared them in the hub: matched together with the daemon's (domain/capability-union.ts). */
  declaredCapabilities: text("declared_capabilities", { mode: "json" }).$type<unknown>(),
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

/** `starting` until the daemon answers a start; `closed` and `error` are final. */
export const SESSION_STATUSES = ["starting", "running", "closed", "error"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const OPEN_SESSION_STATUSES = ["starting", "running"] as const satisfies readonly SessionStatus[];
export const SESSION_ROLES = ["worker", "orchestrator"] as const;
/**
 * What the daemon did with the agent's MCP configuration when it started the session (agent_registry.py WriteStatus):
 * written or merged into the workspace's config file, or not (a read-only workspace, an agent it has no writer for,
 * no workspace).
 */
export const MCP_STATUSES = ["written", "merged", "workspace_readonly", "unsupported", "skipped"] as const;
export type McpStatus = (typeof MCP_STATUSES)[number];

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    serverId: text("server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    workingDirectory: text("working_directory"),
    agentType: text("agent_type"),
    role: text("role", { enum: SESSION_ROLES }).notNull().default("worker"),
    status: text("status", { enum: SESSION_STATUSES }).notNull(),
    /** The agent's process on its server and its tmux session, as the daemon reported them. */
    pid: integer("pid"),
    tmuxName: text("tmux_name"),
    exitCode: integer("exit_code"),
    error: text("error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    closedAt: text("closed_at"),
    /**
     * When the session's terminal last showed output, as its server's link saw it (written at most once a minute): the
     * liveness rules' sign that its agent is at work.
     */
    lastOutputAt: text("last_output_at"),
    /** As the daemon reported it (PATCH /api/v1/server/sessions/{id}/mcp-status); null until it does. */
    mcpStatus: text("mcp_status", { enum: MCP_STATUSES }),
  },
  (t) => [
    index("sessions_project").on(t.projectId, t.status),
    index("sessions_server").on(t.serverId, t.status),
    // One open session of a given name per server; closed ones are history.
    uniqueIndex("sessions_open_name")
      .on(t.serverId, t.name)
      .where(sql`status IN ('starting', 'running')`),
  ],
);
