/**
 * What a link keeps of a tunnel its daemon takes part in, and the pure rules
 * about its frames. The whole state that decides how a frame is handled
 * (whether the daemon was asked to connect, whether it said it is ready) is
 * kept in storage beside the record, so a link that hibernated between two
 * frames handles the second exactly as it would have before the sleep.
 */

/** Frame text on its way to the other link (or held for the daemon), per tunnel, at most. */
export const TUNNEL_WINDOW_BYTES = 8 * 1024 * 1024;
/**
 * How long a person's bytes may wait for the daemon to say the port is open. hub.py gives its own connection 10 s
 * and answers `tunnel_error` then; past this the daemon said nothing at all, and both sides are told the tunnel ended.
 */
export const HELD_WAIT_MS = 15_000;
/** How often a person's open tunnel checks again that they may still type on the session's server. */
export const TUNNEL_ACCESS_RECHECK_MS = 60_000;
/** How long after a tunnel's last data its byte counts are written down (a link hibernates only after ~10 s idle). */
export const COUNTS_SAVE_DELAY_MS = 1000;

export type TunnelSide = "source" | "target" | "person";

/** A tunnel as opened: who takes part and what for. */
export interface TunnelRecord {
  id: string;
  side: TunnelSide;
  grantId: string | null;
  projectId: string;
  /** The other link's server (s2s tunnels); null for a person's tunnel. */
  peerServerId: string | null;
  /** The person and the session of a person's tunnel. */
  userId: string | null;
  sessionId: string | null;
  targetPort: number;
  openedAt: number;
}

/** What the link keeps in storage of a tunnel: the record and every flag that decides how its next frame is handled. */
export interface StoredTunnel extends TunnelRecord {
  /** The daemon that connects to the port said it is ready (always so on the target's side, which connects). */
  ready: boolean;
  /** A person's tunnel: whether the daemon was asked to connect yet (it is, with the person's first bytes). */
  opened: boolean;
  /** Bytes of data each way, counted on the source's (or person's) side for the closing event. */
  up: number;
  down: number;
}

export const storedTunnel = (record: TunnelRecord): StoredTunnel => ({
  ...record,
  ready: record.side === "target",
  opened: record.side !== "person",
  up: 0,
  down: 0,
});

/** A tunnel kept from an older link whose stored form had no flags: it was opened, and past its opening handshake. */
export const restoredTunnel = (kept: TunnelRecord & Partial<StoredTunnel>): StoredTunnel => ({
  ...kept,
  ready: kept.ready ?? true,
  opened: kept.opened ?? true,
  up: kept.up ?? 0,
  down: kept.down ?? 0,
});

/**
 * A person's tunnel that woke with bytes it had held for the daemon, which a sleep or restart lost: it cannot go on,
 * since the port would see a stream with a hole in it.
 */
export const lostHeldBytes = (t: StoredTunnel) => t.side === "person" && t.opened && !t.ready;

export const CLOSING = new Set(["tunnel_close", "tunnel_closed"]);

/** The bytes a base64 string holds, without decoding it. */
export const base64Bytes = (data: unknown) => {
  if (typeof data !== "string") return 0;
  const pad = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, (data.length / 4) * 3 - pad);
};

export const reasonOf = (frame: Record<string, unknown>, fallback: string) =>
  typeof frame.reason === "string" ? frame.reason.slice(0, 500) : typeof frame.error === "string" ? frame.error.slice(0, 500) : fallback;

/** The data of a tunnel's opening and closing events. */
export const tunnelEventData = (t: TunnelRecord) => ({
  tunnel_id: t.id,
  ...(t.grantId ? { grant_id: t.grantId } : {}),
  ...(t.userId ? { user_id: t.userId } : {}),
  ...(t.sessionId ? { session_id: t.sessionId } : {}),
  target_port: t.targetPort,
});
