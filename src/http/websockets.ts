/**
 * What every socket the hub holds needs, whichever object holds it (a project's
 * room, a server's link): sending a JSON frame to a peer that may have gone, and
 * counting a peer's frames against a limit.
 */

/** Sends, ignoring sockets that closed in the meantime (their close handler cleans up). */
export function sendJson(ws: WebSocket, message: unknown) {
  try {
    ws.send(JSON.stringify(message));
  } catch {
    // The peer is gone.
  }
}

/**
 * Frames per socket in one-second windows. Kept in memory: an evicted room
 * forgets the counts, which only ever forgives.
 */
export class FrameRate {
  private readonly windows = new Map<WebSocket, { start: number; count: number }>();

  constructor(readonly perSecond: number) {}

  /** Counts a frame; true when the socket is over its limit this second. */
  exceeded(ws: WebSocket, now = Date.now()): boolean {
    const w = this.windows.get(ws);
    if (!w || now - w.start >= 1000) {
      this.windows.set(ws, { start: now, count: 1 });
      return false;
    }
    return ++w.count > this.perSecond;
  }

  forget(ws: WebSocket) {
    this.windows.delete(ws);
  }
}
