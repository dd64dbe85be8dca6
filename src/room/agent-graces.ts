/**
 * A room's agent sockets: which are authenticated, and the graces they are
 * closed at the end of (to send the API key; after notify:shutdown).
 */
import { AUTH_GRACE_MS } from "./agent-socket";
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
}
