/**
 * An agent socket's `auth` frame: the API key of a socket whose upgrade carried
 * none, and the protocol versions the agent speaks (compute-protocol.md: declared,
 * and an incompatible one refused explicitly). Answered by `auth_ok` with the
 * version spoken, or a refusal and the socket closed.
 */
import { eq } from "drizzle-orm";
import { sha256Hex } from "../auth/secrets";
import type { Db } from "../db/client";
import { servers } from "../db/schema";
import { HUB_PROTOCOL_VERSIONS } from "../domain/protocol-version";
import { authFrame, socketProtocol } from "../protocol/agent-orchestrator-messages";
import { zodFieldErrors } from "../protocol/field-errors";
import { respondError } from "./agent-answers";
import { sendJson } from "../http/websockets";
import { CLOSE, type AgentAttachment } from "./sockets";

/** What authenticating needs of the room. */
export interface AuthPort {
  projectId: string;
  db: Db;
  /** Whether this key was revoked or replaced while the socket was authenticating. */
  keyRevoked(keyHash: string): Promise<boolean>;
}

/** The frame's fields, or a refusal sent (and the socket closed when it is not yet authenticated). */
function frameOf(ws: WebSocket, frame: unknown, correlationId: string | null, authenticated: boolean) {
  const parsed = authFrame.safeParse(frame);
  if (parsed.success) return parsed.data;
  respondError(ws, correlationId, "INVALID_REQUEST", "Invalid auth frame", zodFieldErrors(parsed.error));
  if (!authenticated) ws.close(CLOSE.unauthorized, "invalid auth frame");
  return null;
}

/**
 * Answers the declaration with `auth_ok {protocol_version, warnings?}`; a declaration the hub cannot speak is refused
 * and the socket closed (4005): nothing either side sent after it could be trusted to mean the same.
 */
function answerDeclaration(ws: WebSocket, declared: string[] | undefined, registered: string[] | null, correlationId: string | null): boolean {
  const protocol = socketProtocol(declared, registered);
  if (!protocol.ok) {
    respondError(ws, correlationId, "INVALID_REQUEST", protocol.message, {
      problem: "INCOMPATIBLE_PROTOCOL",
      errors: [{ path: "protocol_versions", message: protocol.message.replace(/^protocol_versions /, "") }],
      protocol_versions: [...HUB_PROTOCOL_VERSIONS],
    });
    ws.close(CLOSE.incompatible, "incompatible protocol version");
    return false;
  }
  sendJson(ws, { type: "auth_ok", protocol_version: protocol.version, ...(protocol.warnings.length ? { warnings: protocol.warnings } : {}) });
  return true;
}

/** The first frame of a socket opened without a key: the server it authenticates as, or null (refused and closed). */
export async function authenticate(
  room: AuthPort,
  ws: WebSocket,
  attachment: AgentAttachment,
  frame: unknown,
  correlationId: string | null,
): Promise<{ id: string; name: string } | null> {
  const fields = frameOf(ws, frame, correlationId, false);
  if (!fields) return null;
  const keyHash = fields.api_key ? await sha256Hex(fields.api_key) : null;
  const server = keyHash ? await room.db.query.servers.findFirst({ where: eq(servers.apiKeyHash, keyHash) }) : undefined;
  const project = await room.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, room.projectId), columns: { id: true } });
  const allowed = server && !server.revokedAt && project && (!server.projectIds || server.projectIds.includes(room.projectId));
  // Checked last: a revocation that reached the room while the lookups ran is seen here.
  if (!allowed || (await room.keyRevoked(keyHash!))) {
    respondError(ws, correlationId, "UNAUTHORIZED", "The API key is invalid, revoked, or not allowed in this project");
    ws.close(CLOSE.unauthorized, "authentication failed");
    return null;
  }
  if (!answerDeclaration(ws, fields.protocol_versions, server!.protocolVersions ?? null, correlationId)) return null;
  ws.serializeAttachment({ ...attachment, serverId: server!.id, serverName: server!.name, keyHash } satisfies AgentAttachment);
  return { id: server!.id, name: server!.name };
}

/** An `auth` frame on a socket already authenticated (by its upgrade's key): it declares the versions the agent speaks. */
export async function redeclare(room: AuthPort, ws: WebSocket, attachment: AgentAttachment, frame: unknown, correlationId: string | null) {
  const fields = frameOf(ws, frame, correlationId, true);
  if (!fields) return;
  const registered = fields.protocol_versions
    ? null
    : ((await room.db.query.servers.findFirst({ where: eq(servers.id, attachment.serverId!), columns: { protocolVersions: true } }))?.protocolVersions ?? null);
  answerDeclaration(ws, fields.protocol_versions, registered, correlationId);
}
