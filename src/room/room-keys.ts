/**
 * Which API keys a room still takes writes from. The Worker may answer an
 * agent's key from a lookup up to 30 s old, so the room decides for writes:
 * it is told of every revoked or replaced key before D1 forgets it (in its
 * queue, so no write by the key commits after that), and it asks D1 about a
 * key it has not seen before (a room of a project created after a
 * revocation was never told of it). A key never becomes valid again once it
 * is not (revoking clears it, re-registering replaces it, and keys are
 * random), so both answers are kept; revoked keys across restarts too.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../db/client";
import { servers } from "../db/schema";
import type { ProblemData, RoomActor } from "./commands";

/** How many keys a room keeps its answer for in memory; one forgotten is asked again. */
const MAX_KEYS = 1_000;

const storageKey = (keyHash: string) => `revoked-key:${keyHash}`;

export const revokedKey = (): ProblemData => ({ status: 401, code: "INVALID_API_KEY", detail: "The API key is invalid or has been revoked" });

export class RoomKeys {
  private readonly valid = new Map<string, boolean>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly db: Db,
  ) {}

  /** The refusal for an agent whose key is revoked or replaced; undefined for anyone else. */
  async refusal(actor: RoomActor): Promise<ProblemData | undefined> {
    if (actor.kind !== "agent" || !actor.keyHash) return undefined;
    const valid = this.valid.get(actor.keyHash) ?? (await this.check(actor.serverId, actor.keyHash));
    return valid ? undefined : revokedKey();
  }

  /** Whether this key was revoked or replaced, as the room was told (sockets that authenticate ask this). */
  async revoked(keyHash: string): Promise<boolean> {
    return this.valid.get(keyHash) === false || (await this.storage.get(storageKey(keyHash))) !== undefined;
  }

  /** From now on the room refuses this key. */
  async revoke(keyHash: string) {
    this.remember(keyHash, false);
    await this.storage.put(storageKey(keyHash), Date.now());
  }

  private async check(serverId: string, keyHash: string): Promise<boolean> {
    let valid = !(await this.revoked(keyHash));
    if (valid) {
      const [row] = await this.db
        .select({ id: servers.id })
        .from(servers)
        .where(and(eq(servers.id, serverId), eq(servers.apiKeyHash, keyHash), isNull(servers.revokedAt)));
      valid = row !== undefined;
    }
    // A revocation told meanwhile wins over what D1 said before it.
    if (this.valid.get(keyHash) === false) return false;
    this.remember(keyHash, valid);
    return valid;
  }

  private remember(keyHash: string, valid: boolean) {
    this.valid.delete(keyHash);
    while (this.valid.size >= MAX_KEYS) this.valid.delete(this.valid.keys().next().value!);
    this.valid.set(keyHash, valid);
  }
}
