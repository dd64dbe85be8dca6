/** WebSockets held by a ProjectRoom (hibernation API): who is on each, and how frames are sent. */
import type { EventType } from "../domain/event-types";
import type { CommittedEvent } from "./statements";

export const DASHBOARD_TAG = "dashboard";
export const AGENT_TAG = "agent";

/** Close codes the hub uses (4000–4999 are the application's). */
export const CLOSE = {
  tokenExpired: 4001,
  unauthorized: 4003,
  revoked: 4004,
  /** The agent declared protocol versions the hub does not speak. */
  incompatible: 4005,
  /** The agent stayed silent past the liveness bound. */
  silent: 4008,
} as const;

export interface DashboardAttachment {
  kind: "dashboard";
  userId: string;
  /** When the access token that opened the socket expires (ms since epoch). */
  expiresAt: number;
  /** Told to page the log (resync_required): no live event goes to it until it resumes. */
  held?: boolean;
}

export interface AgentAttachment {
  kind: "agent";
  /** Null until the agent has sent its API key. */
  serverId: string | null;
  serverName: string | null;
  /** The hub's public base URL as the agent reached it, for DataRef download links. */
  hubBase: string | null;
  /** sha256 of the API key the socket authenticated with: a revoked or replaced key closes only its own sockets. */
  keyHash: string | null;
  /** Tasks whose events this agent asked to receive (request:subscribe-task). */
  subscriptions: string[];
  connectedAt: number;
  /** When the room last handled a frame from the agent (liveness; a second's resolution). */
  lastSeenAt?: number;
  /** Set once notify:shutdown announced a grace period: requests are refused and the socket closes at `at`. */
  closing?: { at: number; reason: string } | null;
}

export type SocketAttachment = DashboardAttachment | AgentAttachment;

export const attachmentOf = (ws: WebSocket) => ws.deserializeAttachment() as SocketAttachment | null;


/** Every frame the hub sends a dashboard besides events (API.md "Live events"). */
export type DashboardFrame =
  | { type: "resumed"; last_seq: number }
  | { type: "resync_required"; since: number; head: number | null; detail: string }
  | { type: "auth_ok"; expires_at: string }
  | PermissionLoggedFrame
  | { type: "error"; code: "INVALID_REQUEST" | "INVALID_MESSAGE_TYPE" | "UNAUTHORIZED"; message: string };

/**
 * New entries in the project's permission log: not an event (the log is written beside the room, not through it), so
 * it has no seq and is not replayed; a dashboard showing the log reads it again from its newest entry.
 */
export interface PermissionLoggedFrame {
  type: "permission_logged";
  count: number;
  newest_created_at: string;
}

/** The dashboard frame of an event (API.md: `{"type": "event", ...event}`; the event's own type is `event_type`). */
export const eventFrame = (e: CommittedEvent) => JSON.stringify({ ...e, type: "event", event_type: e.type } satisfies EventFrame);

/** An event as a dashboard receives it: the event's own type moves to `event_type`. */
type EventFrame = Omit<CommittedEvent, "type"> & { type: "event"; event_type: EventType };
