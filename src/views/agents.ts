/** Agents' servers, their sessions and registration tokens, as the hub answers them. */
import { z } from "zod";
import type { ServerRow, SessionRow } from "../db/client";
import { MCP_STATUSES, registrationTokens, SESSION_ROLES, SESSION_STATUSES } from "../db/schema";
import { effectiveCapabilities } from "../domain/capability-union";
import { isOnline } from "../domain/presence";
import { capabilitiesSchema } from "../protocol/orchestratia-v1";
import { id, json, jsonObject, timestamp } from "./fields";

export const serverSchema = z
  .object({
    id,
    name: z.string().meta({ description: "Unique: registering the name again re-keys this server" }),
    hostname: z.string(),
    os: z.string().nullable(),
    status: z.enum(["online", "offline"]).meta({ description: "Online while its last heartbeat is under 90 s old" }),
    last_heartbeat: timestamp.nullable(),
    repos: z.union([z.record(z.string(), json), z.array(z.string())]).meta({ description: "The repositories the daemon declared (by name, or a list)" }),
    capabilities: capabilitiesSchema.nullable().meta({ description: "As the agent declared them (orchestratia/capabilities/v1)" }),
    declared: capabilitiesSchema.nullable().meta({ description: "As an admin declared them in the hub (`PATCH /api/v1/servers/{id}`); null: none" }),
    effective: capabilitiesSchema
      .nullable()
      .meta({ description: "What matching uses: `capabilities` and `declared` joined (lists together; the declared `max_concurrent_tasks` wins)" }),
    protocol_versions: z.array(z.string()),
    revoked: z.boolean().meta({ description: "Its API key was revoked; it can register again with a new token" }),
    created_at: timestamp,
  })
  .meta({ id: "Server" });

/** What admins see of a server beyond what others do. */
const adminFields = {
  ip: z.string().nullable(),
  system_info: jsonObject.nullable().meta({ description: "As the daemon reported it" }),
  project_ids: z.array(id).nullable().meta({ description: "The projects it serves; null: every project" }),
};

export const serverDetailsSchema = serverSchema.extend(adminFields).meta({ id: "ServerDetails", description: "A server as admins see it" });

/** What matching uses of a server: the daemon's capabilities joined with those declared in the hub. */
export const serverCapabilities = (s: Pick<ServerRow, "capabilities" | "declaredCapabilities">) =>
  effectiveCapabilities(s.capabilities, s.declaredCapabilities);

/** A server as others see it. */
export const serverView = (s: ServerRow, now = Date.now()): z.infer<typeof serverSchema> => ({
  id: s.id,
  name: s.name,
  hostname: s.hostname,
  os: s.os,
  status: isOnline(s.lastHeartbeat, now) ? "online" : "offline",
  last_heartbeat: s.lastHeartbeat,
  repos: (s.repos ?? {}) as z.infer<typeof serverSchema>["repos"],
  capabilities: (s.capabilities ?? null) as z.infer<typeof serverSchema>["capabilities"],
  declared: (s.declaredCapabilities ?? null) as z.infer<typeof serverSchema>["declared"],
  effective: serverCapabilities(s),
  protocol_versions: s.protocolVersions ?? [],
  revoked: s.revokedAt !== null,
  created_at: s.createdAt,
});

/** A server as admins see it: with its address, machine details and scope. */
export const serverDetailsView = (s: ServerRow, now = Date.now()): z.infer<typeof serverDetailsSchema> => ({
  ...serverView(s, now),
  ip: s.ip,
  system_info: (s.systemInfo ?? null) as Record<string, unknown> | null,
  project_ids: s.projectIds ?? null,
});

/** A server as people see it: its load against its capacity, and for admins its details. */
export const serverWithLoadSchema = serverSchema
  .extend({
    ip: adminFields.ip.optional(),
    system_info: adminFields.system_info.optional(),
    project_ids: adminFields.project_ids.optional(),
    active_tasks: z.int().meta({ description: "Its unfinished tasks, across projects" }),
    max_concurrent_tasks: z.int().meta({ description: "From its effective capabilities (1 when they say nothing of it)" }),
  })
  .meta({ description: "`ip`, `system_info` and `project_ids` are there for admins only" });

export const sessionSchema = z
  .object({
    id,
    name: z.string().meta({ description: "Unique among its server's open sessions; tasks are assigned to it by name" }),
    server_id: id,
    server_name: z.string(),
    project_id: id,
    status: z.enum(SESSION_STATUSES).meta({ description: "`starting` until the daemon answers a start; `closed` and `error` are final" }),
    working_directory: z.string().nullable(),
    agent_type: z.string().nullable(),
    role: z.enum(SESSION_ROLES),
    pid: z.int().nullable().meta({ description: "The agent's process on its server, as the daemon reported it" }),
    exit_code: z.int().nullable(),
    error: z.string().nullable().meta({ description: "Why it ended in `error`" }),
    mcp_status: z
      .enum(MCP_STATUSES)
      .nullable()
      .meta({
        description:
          "What the daemon did with the agent's MCP configuration when it started the session: `written` or `merged` into the workspace's " +
          "config file (the agent reaches the hub's tools), or not: `workspace_readonly`, `unsupported`, `skipped`. Null until the daemon reports it",
      }),
    created_at: timestamp,
    updated_at: timestamp,
    closed_at: timestamp.nullable(),
  })
  .meta({ id: "Session" });

export const sessionView = (s: SessionRow, serverName: string): z.infer<typeof sessionSchema> => ({
  id: s.id,
  name: s.name,
  server_id: s.serverId,
  server_name: serverName,
  project_id: s.projectId,
  status: s.status,
  working_directory: s.workingDirectory,
  agent_type: s.agentType,
  role: s.role,
  pid: s.pid,
  exit_code: s.exitCode,
  error: s.error,
  mcp_status: s.mcpStatus,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
  closed_at: s.closedAt,
});

type TokenRow = typeof registrationTokens.$inferSelect;

export function tokenStatus(t: TokenRow, now = Date.now()) {
  if (t.revokedAt) return "revoked" as const;
  if (Date.parse(t.expiresAt) <= now) return "expired" as const;
  if (t.uses >= t.maxUses) return "used_up" as const;
  return "active" as const;
}

export const registrationTokenSchema = z
  .object({
    id,
    name: z.string().nullable(),
    expires_at: timestamp,
    max_uses: z.int(),
    uses: z.int(),
    project_ids: z.array(id).nullable().meta({ description: "The projects a server registered with it serves; null: every project" }),
    status: z.enum(["active", "revoked", "expired", "used_up"]),
    created_at: timestamp,
  })
  .meta({ id: "RegistrationToken", description: "A registration token as admins list it: never the token itself" });

export const tokenView = (t: TokenRow): z.infer<typeof registrationTokenSchema> => ({
  id: t.id,
  name: t.name,
  expires_at: t.expiresAt,
  max_uses: t.maxUses,
  uses: t.uses,
  project_ids: t.projectIds ?? null,
  status: tokenStatus(t),
  created_at: t.createdAt,
});

/** `warnings` appear only when there are some (answers the official clients get stay as they were). */
export const warnings = z.array(z.string()).optional().meta({ description: "What the hub accepted but did not recognise (e.g. an unknown `$schema` version)" });
