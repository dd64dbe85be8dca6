/**
 * API-key lookups remembered by one isolate for a bounded time, so that an
 * agent's requests do not each read D1 for its key. What a lookup found (the
 * server, or that no server has the key) is answered for at most `ttlMs`
 * after it was read, so a key revoked elsewhere stops working here within
 * that time; writes do not wait for it, since the project's room refuses a
 * revoked key itself (src/room/room-keys.ts). Only settled answers are kept:
 * a read in flight belongs to the request that made it (Workers refuse I/O
 * begun by one request and awaited by another), so lookups of the same key
 * arriving together each read once.
 */

export interface KeyLookupOptions {
  /** How long a lookup's answer is used after it was read. */
  ttlMs: number;
  /** The most keys remembered; the oldest lookup is forgotten first. */
  maxEntries: number;
  /** The clock, in milliseconds (a parameter so that expiry can be tested without waiting). */
  now?: () => number;
}

interface Entry<T> {
  readAt: number;
  answer: T | undefined;
}

export class KeyLookups<T> {
  private readonly entries = new Map<string, Entry<T>>();
  readonly ttlMs: number;
  readonly maxEntries: number;
  now: () => number;

  constructor(options: KeyLookupOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.now = options.now ?? Date.now;
  }

  /** The answer for `keyHash`: remembered while fresh, otherwise read and remembered (a failed read is not an answer). */
  async lookup(keyHash: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    const entry = this.entries.get(keyHash);
    if (entry && this.now() - entry.readAt < this.ttlMs) return entry.answer;
    return this.refresh(keyHash, read);
  }

  /** The answer for `keyHash` while this isolate remembers a fresh one, without reading; undefined otherwise. */
  remembered(keyHash: string): T | undefined {
    const entry = this.entries.get(keyHash);
    return entry && this.now() - entry.readAt < this.ttlMs ? entry.answer : undefined;
  }

  /** Reads the answer for `keyHash` now, and remembers it as the latest lookup. */
  async refresh(keyHash: string, read: () => Promise<T | undefined>): Promise<T | undefined> {
    const readAt = this.now();
    const answer = await read();
    // A read that began before the one remembered now is older news: keep the newer.
    if ((this.entries.get(keyHash)?.readAt ?? -Infinity) <= readAt) this.remember(keyHash, { readAt, answer });
    return answer;
  }

  get size() {
    return this.entries.size;
  }

  private remember(keyHash: string, entry: Entry<T>) {
    this.entries.delete(keyHash);
    // Maps iterate in insertion order: the first key is the oldest lookup.
    while (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(keyHash, entry);
  }
}
