/**
 * Liveness of a room's agent sockets under hibernation: what the room last
 * heard on each is kept in the socket's attachment (it outlives an evicted
 * object), beside the runtime's record of the pings it answered without waking
 * the room; the room's alarm pings every socket and closes the silent ones.
 */
import { livenessAction, type LivenessBounds } from "../protocol/agent-liveness";
import { notify } from "./agent-answers";
import { attachmentOf, CLOSE, type AgentAttachment } from "./sockets";

/** Attachments are rewritten at most this often for a socket that keeps talking. */
const SEEN_RESOLUTION_MS = 1000;

/** Notes a frame from the agent. */
export function markSeen(ws: WebSocket, now = Date.now()) {
  const a = attachmentOf(ws) as AgentAttachment;
  if (a.lastSeenAt !== undefined && now - a.lastSeenAt < SEEN_RESOLUTION_MS) return;
  ws.serializeAttachment({ ...a, lastSeenAt: now } satisfies AgentAttachment);
}

/** When the room last heard from the socket: a frame it handled, a `{"type":"ping"}` the runtime answered, or its opening. */
function lastHeard(ctx: DurableObjectState, ws: WebSocket): number {
  const a = attachmentOf(ws) as AgentAttachment;
  const autoAnswered = ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? 0;
  return Math.max(a.lastSeenAt ?? a.connectedAt, autoAnswered);
}

/**
 * Pings each authenticated agent socket and closes those silent past the bound (4008); returns when to come round
 * again, or null when no agent socket is left to watch.
 */
export function pingAgents(ctx: DurableObjectState, sockets: WebSocket[], now: number, bounds: LivenessBounds): number | null {
  let watching = false;
  for (const ws of sockets) {
    if (ws.readyState !== WebSocket.OPEN) continue;
    if (livenessAction(lastHeard(ctx, ws), now, bounds) === "close") {
      ws.close(CLOSE.silent, `nothing heard for ${bounds.silenceMs / 1000} s`);
      continue;
    }
    notify(ws, "notify:ping", { silenceLimitMs: bounds.silenceMs });
    watching = true;
  }
  return watching ? now + bounds.pingMs : null;
}
