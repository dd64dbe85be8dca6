/**
 * Each session's recent terminal output, about 256 KiB, kept in the link's
 * storage so a late viewer sees what came before it joined, even after the
 * link was evicted. Output is appended to a tail chunk in memory and written
 * a moment later (every keystroke's echo is output), without waiting for the
 * write to be confirmed: losing the last instant of scrollback in a crash is
 * better than holding every echo back.
 */

/** Output kept per session: the ring holds at least this much once there has been as much. */
export const SCROLLBACK_BYTES = 256 * 1024;
/** Storage values stay well under the 2 MiB value limit; the ring moves one chunk at a time. */
const CHUNK_BYTES = 16 * 1024;
const FLUSH_MS = 100;

const prefix = (sessionId: string) => `sb:${sessionId}:`;
const chunkKey = (sessionId: string, n: number) => `${prefix(sessionId)}${String(n).padStart(12, "0")}`;

interface Ring {
  /** Chunk numbers in order; the last is the tail, still filling. */
  chunks: { n: number; bytes: Uint8Array; used: number }[];
  total: number;
  /** Chunks changed or dropped since the last write. */
  written: Set<number>;
  dropped: number[];
}

export class Scrollback {
  private readonly rings = new Map<string, Ring>();
  private readonly loading = new Map<string, Promise<void>>();
  private flushTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  /** Reads a session's ring from storage once; `append` and `bytes` need it loaded. */
  load(sessionId: string): Promise<void> {
    if (this.rings.has(sessionId)) return Promise.resolve();
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.storage.list<Uint8Array>({ prefix: prefix(sessionId) }).then((stored) => {
        const chunks = [...stored].map(([key, bytes]) => {
          const copy = new Uint8Array(CHUNK_BYTES);
          copy.set(bytes.subarray(0, CHUNK_BYTES));
          return { n: Number(key.slice(prefix(sessionId).length)), bytes: copy, used: Math.min(bytes.byteLength, CHUNK_BYTES) };
        });
        this.rings.set(sessionId, { chunks, total: chunks.reduce((sum, c) => sum + c.used, 0), written: new Set(), dropped: [] });
        this.loading.delete(sessionId);
      });
      this.loading.set(sessionId, loading);
    }
    return loading;
  }

  isLoaded(sessionId: string) {
    return this.rings.has(sessionId);
  }

  append(sessionId: string, data: Uint8Array) {
    const ring = this.rings.get(sessionId);
    if (!ring) throw new Error(`scrollback of ${sessionId} is not loaded`);
    // Only the last SCROLLBACK_BYTES of one huge write can matter.
    let rest = data.byteLength > SCROLLBACK_BYTES ? data.subarray(data.byteLength - SCROLLBACK_BYTES) : data;
    while (rest.byteLength > 0) {
      let tail = ring.chunks.at(-1);
      if (!tail || tail.used === CHUNK_BYTES) {
        tail = { n: (tail?.n ?? -1) + 1, bytes: new Uint8Array(CHUNK_BYTES), used: 0 };
        ring.chunks.push(tail);
      }
      const take = Math.min(CHUNK_BYTES - tail.used, rest.byteLength);
      tail.bytes.set(rest.subarray(0, take), tail.used);
      tail.used += take;
      ring.total += take;
      ring.written.add(tail.n);
      rest = rest.subarray(take);
    }
    while (ring.chunks.length > 1 && ring.total - ring.chunks[0]!.used >= SCROLLBACK_BYTES) {
      const oldest = ring.chunks.shift()!;
      ring.total -= oldest.used;
      ring.written.delete(oldest.n);
      ring.dropped.push(oldest.n);
    }
    this.flushSoon();
  }

  /** The session's kept output, oldest first (empty when it has none or is not loaded). */
  bytes(sessionId: string): Uint8Array {
    const ring = this.rings.get(sessionId);
    const out = new Uint8Array(ring?.total ?? 0);
    let at = 0;
    for (const c of ring?.chunks ?? []) {
      out.set(c.bytes.subarray(0, c.used), at);
      at += c.used;
    }
    return out;
  }

  /** Lets go of a session's ring in memory (an ended session's); its stored copy stays until `drop`. */
  forget(sessionId: string) {
    this.flush();
    this.rings.delete(sessionId);
  }

  /** Deletes a session's stored scrollback. */
  async drop(sessionId: string) {
    this.rings.delete(sessionId);
    const keys = [...(await this.storage.list({ prefix: prefix(sessionId) })).keys()];
    for (let i = 0; i < keys.length; i += 128) await this.storage.delete(keys.slice(i, i + 128));
  }

  private flushSoon() {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = null;
      this.flush();
    }, FLUSH_MS);
  }

  /** Writes what changed since the last flush. */
  flush() {
    for (const [sessionId, ring] of this.rings) {
      if (ring.written.size === 0 && ring.dropped.length === 0) continue;
      const entries: Record<string, Uint8Array> = {};
      for (const c of ring.chunks) if (ring.written.has(c.n)) entries[chunkKey(sessionId, c.n)] = c.bytes.slice(0, c.used);
      if (Object.keys(entries).length > 0) void this.storage.put(entries, { allowUnconfirmed: true });
      if (ring.dropped.length > 0) void this.storage.delete(ring.dropped.map((n) => chunkKey(sessionId, n)), { allowUnconfirmed: true });
      ring.written.clear();
      ring.dropped = [];
    }
  }
}
