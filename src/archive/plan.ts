/**
 * The archiver's pure decisions: when rows are old enough, which finished tasks go together in a batch, where the
 * batch's object lives, and how archived and live events merge into one log read.
 */

/** The most tasks (or log entries) one batch takes: small, so the room's own operations run between batches. */
export const BATCH_LIMIT = 200;
/** The most rows (events, notes, questions) and bytes (of what weighs: events, notes, results) one batch of tasks takes. */
export const BATCH_ROWS = 5000;
export const BATCH_BYTES = 8 * 1024 * 1024;
/** Runs a batch may start without finishing before it gives way (it is set aside, and tried again a week later). */
export const BATCH_ATTEMPTS = 3;
export const FAILED_RETRY_DAYS = 7;
/** Batches the room runs per turn of its alarm before it lets the rest wait for the next. */
export const BATCHES_PER_RUN = 5;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows older than this (ISO) are archived; null when archiving is off. */
export const cutoffOf = (days: number | null, now: number): string | null => (days === null ? null : new Date(now - days * DAY_MS).toISOString());

/** The UTC day of an ISO timestamp, yyyy-mm-dd. */
export const dayOf = (iso: string) => iso.slice(0, 10);

export type ArchiveKindName = "tasks" | "permission_log" | "deliveries";

/** Where a batch's object lives: per project and day; the log kinds have their own folders beside the tasks'. */
export const archiveKey = (projectId: string, kind: ArchiveKindName, day: string, batchId: string) =>
  `archives/${projectId}/${kind === "tasks" ? "" : `${kind}/`}${day}/${batchId}.ndjson.gz`;

/** Every object of a project's archives is under this prefix (deleted with the project). */
export const archivePrefix = (projectId: string) => `archives/${projectId}/`;

export interface TaskCandidate {
  id: string;
  completed_at: string;
  /** Tasks still in D1 that depend on this one. */
  dependents: string[];
  /** Its rows and bytes (plus the task's own); counted against BATCH_ROWS and BATCH_BYTES when given. */
  rows?: number;
  bytes?: number;
}

/**
 * The next batch: candidates of one day (the first candidate's), at most `limit`, keeping only tasks whose every
 * dependent still in D1 goes in the same batch. A dependency row belongs to its downstream task, and deleting a task
 * takes the rows that name it with it, so an upstream leaves D1 only with or after every task that depends on it:
 * a live task's dependency and its upstream's result stay in D1 for as long as it is there.
 */
export function chooseTaskBatch(
  candidates: readonly TaskCandidate[],
  limit = BATCH_LIMIT,
  bounds = { rows: BATCH_ROWS, bytes: BATCH_BYTES },
): { day: string; ids: string[] } | null {
  const first = candidates[0];
  if (!first) return null;
  const day = dayOf(first.completed_at);
  const kept = new Map<string, TaskCandidate>();
  let rows = 0;
  let bytes = 0;
  for (const c of candidates) {
    if (dayOf(c.completed_at) !== day) continue;
    if (kept.size >= limit) break;
    // A task too big for a batch alone still goes alone.
    if (kept.size > 0 && (rows + (c.rows ?? 0) > bounds.rows || bytes + (c.bytes ?? 0) > bounds.bytes)) break;
    kept.set(c.id, c);
    rows += (c.rows ?? 0) + 1;
    bytes += c.bytes ?? 0;
  }
  // Dropping one task may leave an upstream of it with a dependent outside: until nothing changes.
  for (let changed = true; changed;) {
    changed = false;
    for (const [id, c] of kept) {
      if (c.dependents.some((d) => !kept.has(d))) {
        kept.delete(id);
        changed = true;
      }
    }
  }
  return kept.size === 0 ? null : { day, ids: [...kept.keys()] };
}

export interface SeqEvent {
  seq: number;
}

/** Events after `since` from two sources, in seq order, at most `limit`; a seq seen in both (never, once a batch is done) counts once. */
export function mergeBySeq<E extends SeqEvent>(live: readonly E[], archived: readonly E[], since: number, limit: number): E[] {
  const bySeq = new Map<number, E>();
  for (const e of archived) if (e.seq > since) bySeq.set(e.seq, e);
  for (const e of live) if (e.seq > since) bySeq.set(e.seq, e);
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq).slice(0, limit);
}

/** The lowest and highest seq of these events; nulls for none. */
export function seqRange(seqs: readonly number[]): { seqMin: number | null; seqMax: number | null } {
  if (seqs.length === 0) return { seqMin: null, seqMax: null };
  return { seqMin: Math.min(...seqs), seqMax: Math.max(...seqs) };
}
