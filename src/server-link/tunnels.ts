/**
 * SSH tunnels relayed between servers' links (API.md "SSH access grants and
 * tunnels"), as hub.py, s2s_tunnel.py, tunnel.py and connect.py speak them:
 *
 *   source daemon ─s2s_tunnel_open {tunnel_id, grant_id}─▶ source's link (checks the live grant in D1)
 *     ─acceptTunnel─▶ target's link ─tunnel_open {tunnel_id, target_host, target_port}─▶ target daemon
 *   target daemon ─tunnel_ready | tunnel_error | tunnel_data | tunnel_closed─▶ … ─▶ source daemon, and the other way
 *
 * A person's tunnel (`orchestratia-connect`, `/ws/tunnel`) has its socket on the
 * session's server's link, beside the daemon, and needs no second link. Its
 * daemon side opens with the person's first bytes, not at sign-in: connect.py
 * drops what arrives before its local client connects, and an SSH server
 * speaks first, so its greeting would be lost. The person's bytes wait until
 * the daemon says the connection is ready, for HELD_WAIT_MS at most; and
 * they stop as soon as the person may no longer type on the session's server
 * (told by the API when access changes, and checked again every minute).
 *
 * Each link knows the tunnels its own daemon takes part in, so a frame for any
 * other tunnel is refused there and reaches no other daemon. Frames for the
 * other link go in order, batched: one call at a time per tunnel carries what
 * came meanwhile. The daemons have no flow control of their own (base64 frames
 * on their sockets), so a tunnel whose frames pile up beyond
 * TUNNEL_WINDOW_BYTES on their way to the other link is closed rather than
 * held: a flood on one tunnel cannot grow a link's memory or make the other
 * link's terminals wait behind it.
 */
import type { AccessEvent } from "../room/commands";
import type { DaemonPush } from "./pushes";
import {
  base64Bytes,
  CLOSING,
  COUNTS_SAVE_DELAY_MS,
  HELD_WAIT_MS,
  lostHeldBytes,
  reasonOf,
  restoredTunnel,
  storedTunnel,
  TUNNEL_WINDOW_BYTES,
  tunnelEventData,
  type StoredTunnel,
  type TunnelRecord,
} from "./tunnel-state";

export { TUNNEL_WINDOW_BYTES, type TunnelRecord } from "./tunnel-state";

/** Frames one call to the other link carries, at most (hub.py frames are about 22 KB for its 16 KiB reads). */
const MAX_BATCH_BYTES = 512 * 1024;
const KEY = "tunnel:";
const MAX_ENDED_REMEMBERED = 1000;

/** A tunnel as the link holds it while awake: its stored state, and what is on its way. */
interface Tunnel extends StoredTunnel {
  ending: boolean;
  queue: string[];
  queuedBytes: number;
  sending: boolean;
  /** A person's data waiting for the daemon to be ready, and the deadline by which it must be. */
  held: string[];
  heldBytes: number;
  heldTimer: ReturnType<typeof setTimeout> | null;
  countsTimer: ReturnType<typeof setTimeout> | null;
}

/** The other link of an s2s tunnel, as this one reaches it over RPC. */
export interface TunnelPeer {
  acceptTunnel(record: TunnelRecord): Promise<boolean>;
  tunnelFrames(tunnelId: string, fromServerId: string, frames: string[]): Promise<void>;
}

export interface TunnelPort {
  serverId(): Promise<string>;
  daemonConnected(): boolean;
  toDaemon(frame: DaemonPush): boolean;
  /** Sends a frame as it came (text) to the daemon. */
  toDaemonText(text: string): boolean;
  peer(serverId: string): TunnelPeer;
  person(tunnelId: string): WebSocket | undefined;
  /** Whether a person may still type on this server's sessions of a project (and so reach its machine). */
  mayType(userId: string, projectId: string): Promise<boolean>;
  record(projectId: string, event: AccessEvent, data: Record<string, unknown>): Promise<void>;
  storage: DurableObjectStorage;
}

const stateOf = (t: Tunnel): StoredTunnel => ({
  id: t.id,
  side: t.side,
  grantId: t.grantId,
  projectId: t.projectId,
  peerServerId: t.peerServerId,
  userId: t.userId,
  sessionId: t.sessionId,
  targetPort: t.targetPort,
  openedAt: t.openedAt,
  ready: t.ready,
  opened: t.opened,
  up: t.up,
  down: t.down,
});

export class Tunnels {
  private readonly live = new Map<string, Tunnel>();
  /** Tunnels that ended lately: what a daemon still sends for one is dropped quietly. */
  private readonly ended = new Set<string>();
  /** The most frame text one tunnel has had on its way to the other link at once (the tests and the bench read it). */
  peakQueuedBytes = 0;

  constructor(private readonly port: TunnelPort) {}

  /** Loads the tunnels kept in storage (the link woke from hibernation, or started again). */
  async load() {
    for (const [, kept] of await this.port.storage.list<TunnelRecord & Partial<StoredTunnel>>({ prefix: KEY })) {
      const t = this.keep(restoredTunnel(kept));
      if (lostHeldBytes(t)) void this.end(t, "the hub restarted while the machine's port was opening; connect again", true);
    }
  }

  private keep(state: StoredTunnel): Tunnel {
    const t: Tunnel = { ...state, ending: false, queue: [], queuedBytes: 0, sending: false, held: [], heldBytes: 0, heldTimer: null, countsTimer: null };
    this.live.set(state.id, t);
    return t;
  }

  private save(t: Tunnel) {
    return this.port.storage.put(`${KEY}${t.id}`, stateOf(t));
  }

  /** Byte counts change with every frame: they are written a moment after the last one rather than each time. */
  private counted(t: Tunnel, bytes: number, way: "up" | "down") {
    t[way] += bytes;
    t.countsTimer ??= setTimeout(() => {
      t.countsTimer = null;
      if (this.live.get(t.id) === t) void this.save(t);
    }, COUNTS_SAVE_DELAY_MS);
  }

  has(tunnelId: string) {
    return this.live.has(tunnelId) || this.ended.has(tunnelId);
  }

  /** Whether a person's tunnel is open here (the link's alarm then checks their access again). */
  hasPersonTunnels() {
    return [...this.live.values()].some((t) => t.side === "person");
  }

  // ── Opening ──────────────────────────────────────────────────────────────

  /** The source's side: the grant was checked; the target's link is asked to open. False when its daemon is not connected. */
  async openFromSource(record: TunnelRecord, targetServerId: string): Promise<boolean> {
    const t = this.keep(storedTunnel(record));
    await this.save(t);
    const accepted = await this.port.peer(targetServerId).acceptTunnel({ ...record, side: "target", peerServerId: await this.port.serverId() });
    if (!accepted) await this.forget(t);
    return accepted;
  }

  /** The target's side, asked by the source's link: the daemon connects to its port. */
  async accept(record: TunnelRecord): Promise<boolean> {
    if (this.live.has(record.id)) return false;
    const frame = { type: "tunnel_open", tunnel_id: record.id, target_host: "127.0.0.1", target_port: record.targetPort };
    if (!this.port.toDaemon(frame)) return false;
    await this.save(this.keep(storedTunnel(record)));
    return true;
  }

  /**
   * A person's socket joined (checked by the Worker and the link); false when the daemon is not connected. The daemon
   * connects to the session's machine's port when the person's first bytes come.
   */
  async openForPerson(record: TunnelRecord): Promise<boolean> {
    if (this.live.has(record.id) || !this.port.daemonConnected()) return false;
    await this.save(this.keep(storedTunnel(record)));
    return true;
  }

  // ── Frames ───────────────────────────────────────────────────────────────

  /** A tunnel frame of this link's daemon; false when it is not about a tunnel the daemon takes part in. */
  fromDaemon(type: string, frame: Record<string, unknown>, text: string): boolean {
    const tunnelId = typeof frame.tunnel_id === "string" ? frame.tunnel_id : "";
    const t = this.live.get(tunnelId);
    if (!t) return this.ended.has(tunnelId);
    if (t.side === "person") return (this.daemonToPerson(t, type, frame), true);
    if (type === "tunnel_data" && t.side === "source") this.counted(t, base64Bytes(frame.data), "up");
    this.forward(t, text, CLOSING.has(type));
    // hub.py's source side waits for tunnel_ready and does not read tunnel_error: it is closed too, so it stops waiting.
    if (type === "tunnel_error") this.forward(t, JSON.stringify({ type: "tunnel_close", tunnel_id: t.id, reason: reasonOf(frame, "tunnel error") }), true);
    if (CLOSING.has(type) || type === "tunnel_error") void this.end(t, reasonOf(frame, "closed"), false);
    return true;
  }

  /** Frames of the other link's daemon, in the order it sent them; dropped unless the tunnel is this link's with that link. */
  async arrived(tunnelId: string, fromServerId: string, frames: string[]) {
    const t = this.live.get(tunnelId);
    if (!t || t.peerServerId !== fromServerId) return;
    for (const text of frames) {
      if (!this.port.toDaemonText(text)) return this.end(t, "this server's daemon disconnected", true);
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (frame.type === "tunnel_data" && t.side === "source") this.counted(t, base64Bytes(frame.data), "down");
      if (frame.type === "tunnel_ready" && t.side === "source" && !t.ready) {
        t.ready = true;
        await this.save(t);
        await this.port.record(t.projectId, "tunnel_opened", tunnelEventData(t));
      }
      if (CLOSING.has(frame.type as string)) return this.end(t, reasonOf(frame, "closed"), false);
    }
  }

  /** A person's frame (connect.py sends `tunnel_data {data}` only): handed to the daemon with the tunnel's id. */
  fromPerson(tunnelId: string, message: string | ArrayBuffer) {
    const t = this.live.get(tunnelId);
    if (!t) return;
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message)) as Record<string, unknown>;
    } catch {
      return;
    }
    if (frame.type !== "tunnel_data" || typeof frame.data !== "string") return;
    this.counted(t, base64Bytes(frame.data), "up");
    if (!t.opened) {
      t.opened = true;
      void this.save(t);
      if (!this.port.toDaemon({ type: "tunnel_open", tunnel_id: t.id, target_host: "127.0.0.1", target_port: t.targetPort }))
        return void this.end(t, "the server's daemon is not connected", false);
    }
    if (!t.ready) return this.hold(t, frame.data);
    this.toDaemonData(t, frame.data);
  }

  /** Keeps a person's bytes until the daemon is ready, within the window and for HELD_WAIT_MS at most. */
  private hold(t: Tunnel, data: string) {
    if (t.heldBytes + data.length > TUNNEL_WINDOW_BYTES) return void this.end(t, "the machine's port did not answer in time", true);
    t.held.push(data);
    t.heldBytes += data.length;
    t.heldTimer ??= setTimeout(() => {
      t.heldTimer = null;
      if (!t.ready) void this.end(t, `the machine's port ${t.targetPort} did not open within ${HELD_WAIT_MS / 1000} s`, true);
    }, HELD_WAIT_MS);
  }

  private toDaemonData(t: Tunnel, data: string) {
    if (!this.port.toDaemon({ type: "tunnel_data", tunnel_id: t.id, data })) void this.end(t, "the server's daemon is not connected", false);
  }

  private daemonToPerson(t: Tunnel, type: string, frame: Record<string, unknown>) {
    const socket = this.port.person(t.id);
    if (type === "tunnel_data" && typeof frame.data === "string") {
      this.counted(t, base64Bytes(frame.data), "down");
      socket?.send(JSON.stringify({ type: "tunnel_data", data: frame.data }));
    } else if (type === "tunnel_ready" && !t.ready) {
      t.ready = true;
      clearTimeout(t.heldTimer ?? undefined);
      t.heldTimer = null;
      void this.save(t);
      // What the person sent while the daemon connected goes first, in order.
      for (const data of t.held.splice(0)) this.toDaemonData(t, data);
      t.heldBytes = 0;
      void this.port.record(t.projectId, "tunnel_opened", tunnelEventData(t));
    } else if (type !== "tunnel_ready") {
      void this.end(t, reasonOf(frame, "closed"), false);
    }
  }

  /** Queues a frame for the other link; the tunnel closes if its frames fall too far behind (its closing frame always goes). */
  private forward(t: Tunnel, text: string, closing = false) {
    if (!closing && t.queuedBytes + text.length > TUNNEL_WINDOW_BYTES) {
      void this.end(t, `the other server's link fell more than ${TUNNEL_WINDOW_BYTES} bytes behind`, true);
      return;
    }
    t.queue.push(text);
    t.queuedBytes += text.length;
    this.peakQueuedBytes = Math.max(this.peakQueuedBytes, t.queuedBytes);
    if (!t.sending) void this.flush(t);
  }

  private async flush(t: Tunnel) {
    t.sending = true;
    const peer = this.port.peer(t.peerServerId!);
    const from = await this.port.serverId();
    try {
      while (t.queue.length > 0) {
        let bytes = 0;
        let n = 0;
        while (n < t.queue.length && (n === 0 || bytes + t.queue[n]!.length <= MAX_BATCH_BYTES)) bytes += t.queue[n++]!.length;
        const batch = t.queue.splice(0, n);
        try {
          await peer.tunnelFrames(t.id, from, batch);
        } finally {
          t.queuedBytes -= bytes;
        }
      }
    } catch {
      await this.end(t, "the other server's link could not be reached", false);
    } finally {
      t.sending = false;
    }
  }

  // ── Ending ───────────────────────────────────────────────────────────────

  /**
   * Ends a tunnel on this side: the daemon and the other side are told when
   * `tellDaemon` (the daemon did not end it), a person's socket closes, and
   * the source's or person's side records it in the project's log when it is
   * `logged` (the project still has one).
   */
  private async end(t: Tunnel, reason: string, tellDaemon: boolean, logged = true) {
    if (!this.live.has(t.id) || t.ending) return;
    t.ending = true;
    clearTimeout(t.heldTimer ?? undefined);
    clearTimeout(t.countsTimer ?? undefined);
    // A person's tunnel whose daemon side never opened has nothing on the daemon to close.
    if (tellDaemon && t.opened) {
      this.port.toDaemon({ type: "tunnel_close", tunnel_id: t.id, reason });
      if (t.peerServerId) this.forward(t, JSON.stringify({ type: "tunnel_close", tunnel_id: t.id, reason }), true);
    }
    if (t.side === "person") {
      const socket = this.port.person(t.id);
      try {
        socket?.send(JSON.stringify({ type: "tunnel_close", reason }));
        socket?.close(1000, reason.slice(0, 120));
      } catch {
        // Already closed.
      }
    }
    await this.forget(t);
    if (t.side !== "target" && logged)
      await this.port.record(t.projectId, "tunnel_closed", { ...tunnelEventData(t), reason, bytes_up: t.up, bytes_down: t.down });
  }

  private async forget(t: Tunnel) {
    this.live.delete(t.id);
    if (this.ended.size >= MAX_ENDED_REMEMBERED) this.ended.clear();
    this.ended.add(t.id);
    await this.port.storage.delete(`${KEY}${t.id}`);
  }

  /** Closes every tunnel of a grant that ended (revoked or expired), on both sides. */
  async grantEnded(grantId: string, reason: string) {
    for (const t of [...this.live.values()]) if (t.grantId === grantId) await this.end(t, reason, true);
  }

  /**
   * People's tunnels (of one person, in some projects; null: any) whose person may no longer type on this server's
   * sessions of the tunnel's project end, on both sides: their access changed, or the periodic check found it gone.
   */
  async checkAccess(userId: string | null, projectIds: readonly string[] | null) {
    const mine = [...this.live.values()].filter(
      (t) => t.side === "person" && t.userId !== null && (userId === null || t.userId === userId) && (projectIds === null || projectIds.includes(t.projectId)),
    );
    for (const t of mine) if (!(await this.port.mayType(t.userId!, t.projectId))) await this.end(t, "your access to this session's server changed", true);
  }

  /** A project was deleted: the tunnels opened in its name end, with no log left to record it in. */
  async projectGone(projectId: string) {
    for (const t of [...this.live.values()]) if (t.projectId === projectId) await this.end(t, "the project was deleted", true, false);
  }

  /** The person's socket closed: the daemon closes its connection. */
  async personGone(tunnelId: string) {
    const t = this.live.get(tunnelId);
    if (t) await this.end(t, "the person disconnected", true);
  }

  /** The daemon left: every tunnel it took part in ends, and the other side is told. */
  async daemonGone() {
    for (const t of [...this.live.values()]) {
      if (t.peerServerId) this.forward(t, JSON.stringify({ type: "tunnel_close", tunnel_id: t.id, reason: "the other server's daemon disconnected" }), true);
      await this.end(t, "the server's daemon disconnected", false);
    }
  }
}
