/**
 * A room's agent sockets: which are authenticated, and the graces they are
 * closed at the end of (to send the API key; after notify:shutdown).
 */
import { AUTH_GRACE_MS } from "./agent-socket";
import { notify } from "./agent-answers";
import { earliest } from "./earliest";
import { AGENT_TAG, attachmentOf, CLOSE, type AgentAttachment } from "./sockets";

export class AgentGraces {
  /** Agent sockets still to send their API key, by when their grace ends (in arrival order, so in deadline order). */
  readonly authDeadlines = new Map<WebSocket, number>();

  constructor(private readonly ctx: DurableObjectState) {}

  /** Authenticated agent sockets, of one server or all. */
  agentSockets(serverId?: string): WebSocket[] {
    return this.ctx.getWebSockets(AGENT_TAG).filter((ws) => {
      const a = attachmentOf(ws) as AgentAttachment | null;
      return a?.serverId && (serverId === undefined || a.serverId === serverId);
    });
  }

  /**
   * Closes agent sockets whose grace to send their API key has ended, and
   * those whose shutdown grace has; cheap enough for every turn of the room.
   * Returns when the next shutdown grace ends.
   */
  closeLateAgents(now: number): number | null {
    for (const [ws, deadline] of this.authDeadlines) {
      if (deadline > now) break;
      this.authDeadlines.delete(ws);
      this.closeIfUnauthenticated(ws);
    }
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets(AGENT_TAG)) {
      const closing = (attachmentOf(ws) as AgentAttachment).closing;
      if (!closing) continue;
      if (closing.at <= now) {
        if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.revoked, closing.reason);
      } else next = earliest([next, closing.at]);
    }
    return next;
  }

  private closeIfUnauthenticated(ws: WebSocket) {
    if (!(attachmentOf(ws) as AgentAttachment).serverId && ws.readyState === WebSocket.OPEN)
      ws.close(CLOSE.unauthorized, `no API key within ${AUTH_GRACE_MS / 1000} s`);
  }

  /** Closes agent sockets that never sent their API key (after a restart, when no timer is left); returns when the next one's grace ends. */
  closeUnauthenticatedAgents(now: number): number | null {
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets(AGENT_TAG)) {
      const a = attachmentOf(ws) as AgentAttachment;
      if (a.serverId) continue;
      if (a.connectedAt + AUTH_GRACE_MS <= now) this.closeIfUnauthenticated(ws);
      else next = earliest([next, a.connectedAt + AUTH_GRACE_MS]);
    }
    return next;
  }

  /**
   * notify:shutdown, and what it announces: from now on the sockets' requests are refused; they close at once, or when
   * the grace period ends (answers already under way still reach them meanwhile). When that is, for the room's alarm.
   */
  shutDown(sockets: WebSocket[], reason: string, graceMs: number): number | null {
    const at = Date.now() + graceMs;
    for (const ws of sockets) {
      notify(ws, "notify:shutdown", { gracePeriod: graceMs, reason });
      if (graceMs === 0) ws.close(CLOSE.revoked, reason);
      else ws.serializeAttachment({ ...(attachmentOf(ws) as AgentAttachment), closing: { at, reason } } satisfies AgentAttachment);
    }
    if (graceMs === 0 || sockets.length === 0) return null;
    // As for the API key's grace: the timer covers an idle room, every turn and the alarm a busy or restarted one.
    setTimeout(() => this.closeLateAgents(Date.now()), graceMs);
    return at;
  }
}
