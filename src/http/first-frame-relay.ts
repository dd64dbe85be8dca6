/**
 * A WebSocket that authenticates with its first frame (the daemon's API key at
 * `/ws/server`, a connect token at `/ws/tunnel`): the Worker checks that frame,
 * joins the socket to one a Durable Object accepted, and relays frames both
 * ways. Frames sent while the first is checked are held and delivered after
 * it; a socket that sends nothing in time is refused; either end closing
 * closes the other.
 */

/** A close code one end may pass on to the other (1005 and 1006 are only ever reported, never sent). */
const passable = (code: number) => (code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000);

export function closeQuietly(ws: WebSocket, code: number, reason: string) {
  try {
    ws.close(passable(code), reason.slice(0, 120));
  } catch {
    // Already closed.
  }
}

export interface FirstFrameRelay {
  graceMs: number;
  /** Told to the socket that sent nothing within the grace. */
  late: string;
  /** Told when the check itself failed (the hub, not the credentials). */
  failed: string;
  refuse(detail: string): void;
  /** The Durable Object's end for this first frame, or null when it refused (and told the socket why). */
  join(first: string | ArrayBuffer): Promise<WebSocket | null>;
  /** A frame taken before relaying (true: handled, not relayed); `joined` is the other end once there is one. */
  intercept?(data: string | ArrayBuffer, joined: WebSocket | null): boolean;
}

export function relayAfterFirstFrame(outer: WebSocket, relay: FirstFrameRelay) {
  let inner: WebSocket | null = null;
  let held: (string | ArrayBuffer)[] | null = null;
  const grace = setTimeout(() => inner || relay.refuse(relay.late), relay.graceMs);
  outer.addEventListener("message", (e) => {
    if (relay.intercept?.(e.data, inner)) return;
    if (inner) return inner.send(e.data);
    if (held) return void held.push(e.data);
    held = [];
    void relay.join(e.data).then(
      (joined) => {
        clearTimeout(grace);
        if (!joined) return;
        if (outer.readyState !== WebSocket.OPEN) return closeQuietly(joined, 1000, "the other end left");
        inner = joined;
        joined.addEventListener("message", (m) => outer.send(m.data));
        joined.addEventListener("close", (m) => closeQuietly(outer, m.code, m.reason));
        held!.forEach((frame) => joined.send(frame));
        held = null;
      },
      () => relay.refuse(relay.failed),
    );
  });
  outer.addEventListener("close", (e) => {
    clearTimeout(grace);
    if (inner) closeQuietly(inner, e.code, e.reason);
  });
}
