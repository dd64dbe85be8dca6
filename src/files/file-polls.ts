/**
 * The daemons' polls for files: hub.py asks for its pending uploads and for its pending downloads every 3 s each,
 * whether or not anyone ever sends it a file (about 58,000 requests a day per machine). Almost every answer is `[]`.
 *
 * One read of the index of pending transfers answers the list asked for and whether the other list is empty too.
 * What an isolate read empty stays known for POLL_MEMO_MS: a poll of a list known empty, with a key the isolate
 * remembers (middleware/guards.ts), is answered `[]` before the app's middleware, with no D1 read. A transfer
 * recorded in this isolate drops what it knew of that server at once; one recorded elsewhere is heard of at the
 * server's first poll after POLL_MEMO_MS (a new file is picked up within 13 s at worst, 3 s when it comes through
 * the isolate the daemon polls).
 */
import { apiKeyLookups } from "../middleware/guards";
import { sha256Hex } from "../auth/secrets";
import type { FileTransferKind } from "../db/schema";
import { REQUEST_ID_HEADER } from "../http/request-id";

export const POLL_MEMO_MS = 10_000;

export const POLL_PATHS: Record<string, FileTransferKind> = {
  "/api/v1/server/files/pending": "upload",
  "/api/v1/server/files/pulls/pending": "download",
};

interface Known {
  /** When a read that found each list empty began. */
  empty: Partial<Record<FileTransferKind, number>>;
  /** When a transfer for the server was last recorded in this isolate: a read begun before then is out of date. */
  changedAt: number;
}

/** Per server, when this isolate last read each list empty. */
export class EmptyLists {
  private readonly known = new Map<string, Known>();
  now: () => number = Date.now;

  constructor(
    readonly ttlMs: number,
    private readonly maxServers: number,
  ) {}

  /** What a read begun at `at` found: which of the server's lists were empty. */
  record(serverId: string, at: number, empty: Record<FileTransferKind, boolean>) {
    const changedAt = this.known.get(serverId)?.changedAt ?? -Infinity;
    if (changedAt >= at) return;
    const found: Known["empty"] = {};
    for (const kind of Object.keys(empty) as FileTransferKind[]) if (empty[kind]) found[kind] = at;
    this.remember(serverId, { empty: found, changedAt });
  }

  isEmpty(serverId: string, kind: FileTransferKind) {
    const at = this.known.get(serverId)?.empty[kind];
    return at !== undefined && this.now() - at < this.ttlMs;
  }

  /** A transfer for the server was recorded here: its lists are read again. */
  forget(serverId: string) {
    this.remember(serverId, { empty: {}, changedAt: this.now() });
  }

  private remember(serverId: string, known: Known) {
    this.known.delete(serverId);
    // Maps iterate in insertion order: the first server is the one heard of longest ago.
    while (this.known.size >= this.maxServers) this.known.delete(this.known.keys().next().value!);
    this.known.set(serverId, known);
  }
}

export const emptyLists = new EmptyLists(POLL_MEMO_MS, 10_000);

/** The list a request polls, when it is a daemon's poll for files. */
export function polledList(request: Request): FileTransferKind | undefined {
  // Every request passes here: most are told apart by their method and the end of their URL, without parsing it.
  if (request.method !== "GET" || !request.url.endsWith("/pending")) return undefined;
  return POLL_PATHS[new URL(request.url).pathname];
}

/** `[]` for a daemon's poll of a list this isolate knows is empty, with a key it remembers; null for the app to answer. */
export async function answerKnownEmptyPoll(request: Request, kind: FileTransferKind): Promise<Response | null> {
  const key = request.headers.get("X-API-Key")?.trim();
  if (!key) return null;
  const server = apiKeyLookups.remembered(await sha256Hex(key));
  if (!server || server.revokedAt || !emptyLists.isEmpty(server.id, kind)) return null;
  return new Response("[]", {
    headers: {
      "Content-Type": "application/json",
      "X-Content-Type-Options": "nosniff",
      [REQUEST_ID_HEADER]: crypto.randomUUID(),
      "Server-Timing": 'worker;desc="d1 queries=0", worker-d1;desc="rows read=0, rows written=0, calls uncounted=0", worker-do;desc="requests=0"',
    },
  });
}
