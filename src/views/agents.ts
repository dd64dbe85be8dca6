import type { ServerRow, SessionRow } from "../db/client";
import { isOnline } from "../domain/presence";

/** A server as others see it; `full` (admins) adds its address, machine details and scope. */
export const serverView = (s: ServerRow, now = Date.now(), full = false) => ({
  id: s.id,
  name: s.name,
  hostname: s.hostname,
  os: s.os,
  status: isOnline(s.lastHeartbeat, now) ? ("online" as const) : ("offline" as const),
  last_heartbeat: s.lastHeartbeat,
  repos: s.repos ?? {},
  capabilities: s.capabilities ?? null,
  protocol_versions: s.protocolVersions ?? [],
  revoked: s.revokedAt !== null,
  created_at: s.createdAt,
  ...(full ? { ip: s.ip, system_info: s.systemInfo ?? null, project_ids: s.projectIds ?? null } : {}),
});

export const sessionView = (s: SessionRow, serverName: string) => ({
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
  created_at: s.createdAt,
  updated_at: s.updatedAt,
  closed_at: s.closedAt,
});
