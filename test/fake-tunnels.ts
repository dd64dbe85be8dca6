/**
 * A fake daemon's SSH access grants and tunnels, field for field as hub.py
 * dispatches them: `setup_ssh_access` / `revoke_ssh_access` (ssh_setup.py's
 * authorized_keys, target side), `grant_ssh_access` / `revoke_grant_access`
 * (the stored private key and s2s_tunnel.py's listener, source side),
 * `_reconcile_grants` against `GET /api/v1/server/access-grants`, and the
 * tunnel frames of s2s_tunnel.py (source) and tunnel.py (target): 16 KiB reads
 * sent as base64 `tunnel_data`, `tunnel_closed {reason: "eof"}` at the end.
 */
import { call } from "./helpers";
import type { FakeDaemon } from "./fake-daemon";

/** s2s_tunnel.py and tunnel.py read 16 KiB from their TCP sockets at a time. */
export const TUNNEL_READ_BYTES = 16_384;

export interface TunnelEnd {
  id: string;
  /** `source`: opened by this daemon's listener; `target`: opened by the hub's `tunnel_open`. */
  side: "source" | "target";
  targetPort?: number;
  ready: boolean;
  /** Bytes this end read from its local socket and sent. */
  sent: number;
  /** The bytes written to the local TCP socket, in order. */
  chunks: Uint8Array[];
  bytes: number;
  /** Why the hub closed it (tunnel_close / tunnel_closed), or the error the target reported. */
  closed: string | null;
}

export interface SshSide {
  authorizedKeys: Map<string, { key: string; privilegeLevel: string }>;
  privateKeys: Map<string, string>;
  /** s2s_tunnel._active_grants: grant id → its listener. */
  listeners: Map<string, { bindPort: number; targetPort: number }>;
  tunnels: Map<string, TunnelEnd>;
  /** Ports this machine's sshd (or another service) listens on; tunnel_open to another is answered tunnel_error. */
  services: Set<number>;
  /** Ports whose connection hangs: tunnel_open to one is never answered (a daemon that lost the frame, say). */
  hanging: Set<number>;
  /** Frames the hub sent about grants, in order. */
  grantFrames: any[];
  reconcile(): Promise<void>;
  /** A local process connects to the grant's listener: `s2s_tunnel_open`, then waits for tunnel_ready (or a close). */
  connect(grantId: string, timeoutMs?: number): Promise<TunnelEnd>;
  /** Bytes read from the local socket, sent as hub.py does; `ahead` makes it wait while the other side lags (socket buffers). */
  write(tunnelId: string, bytes: Uint8Array, ahead?: () => boolean): Promise<void>;
  /** The local socket reached EOF. */
  eof(tunnelId: string): void;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `kept`: what the daemon had before it reconnected (its key files, and its listeners if the process stayed up). */
export function sshSide(
  daemon: FakeDaemon,
  apiKey: string,
  services: number[] = [22],
  kept?: Pick<SshSide, "authorizedKeys" | "privateKeys" | "listeners">,
): SshSide {
  const side: SshSide = {
    authorizedKeys: kept?.authorizedKeys ?? new Map(),
    privateKeys: kept?.privateKeys ?? new Map(),
    listeners: kept?.listeners ?? new Map(),
    tunnels: new Map(),
    services: new Set(services),
    hanging: new Set(),
    grantFrames: [],
    reconcile,
    connect,
    write,
    eof: (tunnelId) => daemon.send({ type: "tunnel_closed", tunnel_id: tunnelId, reason: "eof" }),
  };
  const end = (id: string, s: "source" | "target", targetPort?: number): TunnelEnd => {
    const t: TunnelEnd = { id, side: s, ...(targetPort ? { targetPort } : {}), ready: false, sent: 0, chunks: [], bytes: 0, closed: null };
    side.tunnels.set(id, t);
    return t;
  };
  /** s2s_tunnel.setup_grant: any listener of the same grant or on the same port goes first. */
  const listen = (grantId: string, bindPort: number, targetPort: number) => {
    for (const [gid, l] of side.listeners) if (gid === grantId || l.bindPort === bindPort) side.listeners.delete(gid);
    side.listeners.set(grantId, { bindPort, targetPort });
  };
  const closeTunnelsOf = (reason: string) => (t: TunnelEnd) => (t.closed ??= reason);

  daemon.socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    switch (frame.type) {
      case "setup_ssh_access":
        side.grantFrames.push(frame);
        if (frame.grant_id && frame.ssh_public_key)
          side.authorizedKeys.set(frame.grant_id, { key: frame.ssh_public_key, privilegeLevel: frame.privilege_level ?? "standard" });
        break;
      case "revoke_ssh_access":
        side.grantFrames.push(frame);
        if (frame.grant_id) side.authorizedKeys.delete(frame.grant_id);
        break;
      case "grant_ssh_access":
        side.grantFrames.push(frame);
        if (frame.grant_id && frame.ssh_private_key && frame.local_bind_port) {
          side.privateKeys.set(frame.grant_id, frame.ssh_private_key);
          listen(frame.grant_id, frame.local_bind_port, frame.target_port ?? 22);
        }
        break;
      case "revoke_grant_access":
        side.grantFrames.push(frame);
        if (frame.grant_id) {
          side.privateKeys.delete(frame.grant_id);
          side.listeners.delete(frame.grant_id);
        }
        break;
      case "tunnel_open": {
        // tunnel.py open_tunnel: connect to target_host:target_port, then tunnel_ready (or tunnel_error).
        const port = frame.target_port ?? 22;
        if (side.hanging.has(port)) {
          end(frame.tunnel_id, "target", port);
          break;
        }
        if (!side.services.has(port)) {
          daemon.send({ type: "tunnel_error", tunnel_id: frame.tunnel_id, error: "[Errno 111] Connect call failed ('127.0.0.1', " + port + ")" });
          break;
        }
        end(frame.tunnel_id, "target", port).ready = true;
        daemon.send({ type: "tunnel_ready", tunnel_id: frame.tunnel_id });
        break;
      }
      case "tunnel_ready": {
        const t = side.tunnels.get(frame.tunnel_id);
        if (t) t.ready = true;
        break;
      }
      case "tunnel_data": {
        const t = side.tunnels.get(frame.tunnel_id);
        if (t && !t.closed && frame.data) {
          const bytes = Uint8Array.fromBase64(frame.data);
          t.chunks.push(bytes);
          t.bytes += bytes.byteLength;
        }
        break;
      }
      case "tunnel_close":
      case "tunnel_closed": {
        const t = side.tunnels.get(frame.tunnel_id);
        if (t) closeTunnelsOf(frame.reason ?? frame.type)(t);
        break;
      }
    }
  });

  async function reconcile() {
    const reply = await call("/api/v1/server/access-grants", { apiKey, headers: { "User-Agent": "python-httpx/0.28.1" } });
    if (reply.status !== 200) throw new Error(`reconcile: HTTP ${reply.status}`);
    const grants: any[] = reply.json ?? [];
    const hubSource = new Set(grants.filter((g) => g.role === "source").map((g) => g.grant_id));
    for (const gid of [...side.listeners.keys()]) {
      if (hubSource.has(gid)) continue;
      side.listeners.delete(gid);
      side.privateKeys.delete(gid);
    }
    for (const g of grants) {
      if (g.role === "source" && g.ssh_private_key && g.local_bind_port) {
        side.privateKeys.set(g.grant_id, g.ssh_private_key);
        listen(g.grant_id, g.local_bind_port, g.target_port ?? 22);
      } else if (g.role === "target" && g.ssh_public_key) {
        side.authorizedKeys.set(g.grant_id, { key: g.ssh_public_key, privilegeLevel: g.privilege_level ?? "standard" });
      }
    }
  }

  async function connect(grantId: string, timeoutMs = 10_000) {
    const t = end(crypto.randomUUID(), "source");
    daemon.send({ type: "s2s_tunnel_open", tunnel_id: t.id, grant_id: grantId });
    const deadline = Date.now() + timeoutMs;
    while (!t.ready && !t.closed && Date.now() < deadline) await wait(2);
    return t;
  }

  async function write(tunnelId: string, bytes: Uint8Array, ahead: () => boolean = () => false) {
    for (let at = 0; at < bytes.byteLength; at += TUNNEL_READ_BYTES) {
      while (ahead()) await wait(1);
      const t = side.tunnels.get(tunnelId);
      if (t) t.sent += Math.min(TUNNEL_READ_BYTES, bytes.byteLength - at);
      daemon.send({ type: "tunnel_data", tunnel_id: tunnelId, data: bytes.subarray(at, at + TUNNEL_READ_BYTES).toBase64() });
    }
  }

  return side;
}

/** Random bytes (getRandomValues fills at most 64 KiB at once). */
export function randomBytes(size: number) {
  const out = new Uint8Array(size);
  for (let at = 0; at < size; at += 65_536) crypto.getRandomValues(out.subarray(at, Math.min(size, at + 65_536)));
  return out;
}

/** The bytes a tunnel's end received, joined. */
export function receivedBytes(t: TunnelEnd): Uint8Array {
  const out = new Uint8Array(t.bytes);
  let at = 0;
  for (const c of t.chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
