/**
 * Moves a project's old rows from D1 to R2, a batch at a time, in four steps that each leave a record in D1, so a
 * restart resumes a batch from the step it reached:
 *  1. record: the batch (its kind, day, row ids and object key) is written before anything else;
 *  2. put: the rows are read (with a fingerprint of what they are) and put to R2 as gzip NDJSON, with the count and
 *     sha256 recorded;
 *  3. verify: the object is read back; its count and sha256 must be those recorded (else back to step 2);
 *  4. commit: one D1 batch marks the batch done only if its rows still match the fingerprint and every one of them is
 *     still due (the source's `notDueSql`: a retry, a new dependent, a late note or a redelivery since step 1 keeps a
 *     row in D1), and deletes the rows and records where each archived task lives only if it was so marked. When it
 *     was not, the batch shrinks to the rows still due (and is put again) or, with none left, is dropped.
 * Only step 4 runs in the room's queue (`serialise`), between its operations; choosing the rows, reading them and the
 * R2 I/O run outside it, since the commit checks again in the same transaction as its deletes. Nothing is deleted
 * before its copy was read back, and a row is in at most one open batch, so nothing is lost or duplicated whichever
 * step a crash interrupts. A batch that keeps failing (BATCH_ATTEMPTS runs) gives way: it is set aside as failed, so
 * the next batches go on, and its rows are taken again a week later.
 */
import type { ArchiveKind, ArchiveStep } from "../db/schema";
import { projectSettingsOf } from "../domain/project-settings";
import { decodeNdjson, encodeNdjson, sha256Hex } from "./codec";
import { deliverySource, permissionLogSource } from "./log-sources";
import { archiveKey, BATCH_ATTEMPTS, BATCHES_PER_RUN, cutoffOf, FAILED_RETRY_DAYS, seqRange } from "./plan";
import type { ArchiveSource } from "./sources";
import { taskSource } from "./task-source";

export interface BatchRow {
  id: string;
  project_id: string;
  kind: ArchiveKind;
  day: string;
  key: string;
  ids: string;
  step: ArchiveStep;
  count: number | null;
  sha256: string | null;
  fingerprint: string | null;
  seq_min: number | null;
  seq_max: number | null;
}

export interface ArchiverDeps {
  d1: D1Database;
  bucket: R2Bucket;
  projectId: string;
  /** Runs work in the room's queue, between its operations (the identity outside a room). */
  serialise: <T>(work: () => Promise<T>) => Promise<T>;
  /** The tasks left D1: the room forgets any it holds. */
  forgetTasks?: () => void;
  /** Days the permission log is kept when not archived (PERMISSION_LOG_DAYS): it is archived no later. */
  permissionLogDays: number;
  /** Counts the runs that took up a batch (kept where a crash of the run does not lose it: the room's storage). */
  attempts?: AttemptCounter;
  now?: () => number;
}

export interface AttemptCounter {
  /** One more run took up the batch: how many have. */
  bump(batchId: string): Promise<number>;
  clear(batchId: string): Promise<void>;
}

/** Attempts counted in memory (outside a room). */
export function memoryAttempts(): AttemptCounter {
  const counts = new Map<string, number>();
  return {
    bump: async (id) => {
      counts.set(id, (counts.get(id) ?? 0) + 1);
      return counts.get(id)!;
    },
    clear: async (id) => void counts.delete(id),
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deliveries that are over are kept a week in D1 when not archived (cron/maintenance.ts): archived no later. */
export const DELIVERY_KEEP_DAYS = 7;

export type Outcome = "done" | "dropped" | "failed" | "retry";

export class Archiver {
  private readonly sources: Record<ArchiveKind, ArchiveSource>;
  private readonly attempts: AttemptCounter;

  constructor(private readonly deps: ArchiverDeps) {
    this.sources = {
      tasks: taskSource(deps.d1, deps.projectId),
      permission_log: permissionLogSource(deps.d1, deps.projectId),
      deliveries: deliverySource(deps.d1, deps.projectId),
    };
    this.attempts = deps.attempts ?? memoryAttempts();
  }

  private now = () => (this.deps.now ?? Date.now)();

  /** The cutoff of each kind now; none when the project archives nothing. */
  async cutoffs(): Promise<Partial<Record<ArchiveKind, string>>> {
    const row = await this.deps.d1.prepare("SELECT settings FROM projects WHERE id = ?1").bind(this.deps.projectId).first<{ settings: string }>();
    const days = row ? projectSettingsOf(JSON.parse(row.settings)).archive_after_days : null;
    if (days === null) return {};
    return {
      tasks: cutoffOf(days, this.now())!,
      permission_log: cutoffOf(Math.min(days, this.deps.permissionLogDays), this.now())!,
      deliveries: cutoffOf(Math.min(days, DELIVERY_KEEP_DAYS), this.now())!,
    };
  }

  /**
   * The project's oldest batch to take further (one being dropped first); none set aside as failed, but those set aside
   * a week ago are dropped now, so that their rows are taken again.
   */
  async openBatch(): Promise<BatchRow | null> {
    await this.deps.d1
      .prepare("UPDATE archive_batches SET step = 'dropped', updated_at = ?3 WHERE project_id = ?1 AND step = 'failed' AND updated_at < ?2")
      .bind(this.deps.projectId, new Date(this.now() - FAILED_RETRY_DAYS * DAY_MS).toISOString(), new Date(this.now()).toISOString())
      .run();
    return this.deps.d1
      .prepare("SELECT * FROM archive_batches WHERE project_id = ?1 AND step NOT IN ('done', 'failed') ORDER BY step = 'dropped' DESC, created_at, id LIMIT 1")
      .bind(this.deps.projectId)
      .first<BatchRow>();
  }

  /**
   * Step 1: records the next batch of rows due (the first kind that has any); null when none is. Outside the room's
   * queue: the commit checks the rows again.
   */
  async record(): Promise<BatchRow | null> {
    const cutoffs = await this.cutoffs();
    const now = new Date(this.now()).toISOString();
    for (const kind of ["tasks", "permission_log", "deliveries"] as const) {
      const cutoff = cutoffs[kind];
      if (!cutoff) continue;
      const due = await this.sources[kind].due(cutoff);
      if (!due) continue;
      const id = crypto.randomUUID();
      const key = archiveKey(this.deps.projectId, kind, due.day, id);
      return this.deps.d1
        .prepare(
          "INSERT INTO archive_batches (id, project_id, kind, day, key, ids, step, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'recorded', ?7, ?7) RETURNING *",
        )
        .bind(id, this.deps.projectId, kind, due.day, key, JSON.stringify(due.ids), now)
        .first<BatchRow>();
    }
    return null;
  }

  /** Step 2: the batch's rows put to R2; the count, sha256, fingerprint and seq range recorded. */
  async put(batch: BatchRow): Promise<BatchRow> {
    const gathered = await this.sources[batch.kind].gather(JSON.parse(batch.ids) as string[]);
    const encoded = await encodeNdjson(gathered.records);
    await this.deps.bucket.put(batch.key, encoded.bytes, {
      sha256: encoded.sha256,
      httpMetadata: { contentType: "application/x-ndjson", contentEncoding: "gzip" },
      customMetadata: { count: String(encoded.count), sha256: encoded.sha256, kind: batch.kind },
    });
    const { seqMin, seqMax } = seqRange(gathered.seqs);
    return (await this.deps.d1
      .prepare(
        "UPDATE archive_batches SET step = 'put', count = ?2, sha256 = ?3, fingerprint = ?4, seq_min = ?5, seq_max = ?6, updated_at = ?7 WHERE id = ?1 RETURNING *",
      )
      .bind(batch.id, encoded.count, encoded.sha256, gathered.fingerprint, seqMin, seqMax, new Date(this.now()).toISOString())
      .first<BatchRow>())!;
  }

  /** Step 3: the object read back; verified when its count and sha256 are those recorded, else put again. */
  async verify(batch: BatchRow): Promise<BatchRow> {
    const object = await this.deps.bucket.get(batch.key);
    const bytes = object ? new Uint8Array(await object.arrayBuffer()) : null;
    const whole = bytes !== null && (await sha256Hex(bytes)) === batch.sha256 && (await decodeNdjson(bytes).catch(() => [])).length === batch.count;
    return (await this.deps.d1
      .prepare("UPDATE archive_batches SET step = ?2, updated_at = ?3 WHERE id = ?1 RETURNING *")
      .bind(batch.id, whole ? "verified" : "recorded", new Date(this.now()).toISOString())
      .first<BatchRow>())!;
  }

  /**
   * Step 4, in the room's queue: one D1 batch marks the batch done if its rows are still what was put and all still
   * due, and deletes them only if it did. Else the batch shrinks to the rows still due (put again) or is dropped.
   */
  async commit(batch: BatchRow): Promise<BatchRow | Outcome> {
    const source = this.sources[batch.kind];
    const ids = JSON.parse(batch.ids) as string[];
    const cutoff = (await this.cutoffs())[batch.kind] ?? null;
    const outcome = await this.deps.serialise(async (): Promise<BatchRow | Outcome> => {
      // Another run may have settled it meanwhile (it is then done, or dropped with its object).
      const step = await this.deps.d1.prepare("SELECT step FROM archive_batches WHERE id = ?1").bind(batch.id).first<string>("step");
      if (step !== "verified") return "retry";
      // Archiving turned off since: nothing is due.
      if (cutoff === null) return this.shrink(batch, []);
      const d1 = this.deps.d1;
      const now = new Date(this.now()).toISOString();
      // Every statement after the first runs only if the first marked the batch done, in the same transaction.
      if (!/^[0-9a-f-]{36}$/.test(batch.id)) throw new Error(`archive batch id ${batch.id} is not a uuid`);
      const guard = `EXISTS (SELECT 1 FROM archive_batches WHERE id = '${batch.id}' AND step = 'done')`;
      const index =
        batch.kind === "tasks"
          ? [
              d1
                .prepare(
                  `INSERT INTO archived_tasks (task_id, project_id, batch_id, key, day, seq_min, seq_max)
                   SELECT value, ?1, ?2, ?3, ?4, ?5, ?6 FROM json_each(?7) WHERE ${guard}`,
                )
                .bind(batch.project_id, batch.id, batch.key, batch.day, batch.seq_min, batch.seq_max, batch.ids),
            ]
          : [];
      const [marked] = await d1.batch([
        d1
          .prepare(
            `UPDATE archive_batches SET step = 'done', updated_at = ?4 WHERE id = ?5 AND step = 'verified'
               AND ${source.fingerprintSql} IS ?6 AND NOT EXISTS (${source.notDueSql})`,
          )
          .bind(this.deps.projectId, batch.ids, cutoff, now, batch.id, batch.fingerprint),
        ...source.deletions(ids, guard),
        ...index,
      ]);
      if (marked!.meta.changes === 1) {
        if (batch.kind === "tasks") this.deps.forgetTasks?.();
        return "done";
      }
      return this.shrink(batch, await this.stillDue(batch, ids, cutoff));
    });
    if (outcome === "dropped") await this.finishDrop(batch);
    return outcome;
  }

  /** The ids still due, once those that are not, and then any that only went with those (a dependent that stays), are left out. */
  private async stillDue(batch: BatchRow, ids: string[], cutoff: string): Promise<string[]> {
    for (let kept = ids; ;) {
      const { results } = await this.deps.d1
        .prepare(this.sources[batch.kind].notDueSql)
        .bind(this.deps.projectId, JSON.stringify(kept), cutoff)
        .all<{ value: string }>();
      if (results.length === 0) return kept;
      const out = new Set(results.map((r) => r.value));
      kept = kept.filter((id) => !out.has(id));
      if (kept.length === 0) return [];
    }
  }

  /** The batch takes only `ids` now, put again from step 2 (over the same key); with none, it is being dropped. */
  private async shrink(batch: BatchRow, ids: string[]): Promise<BatchRow | "dropped"> {
    const now = new Date(this.now()).toISOString();
    if (ids.length === 0) {
      await this.deps.d1.prepare("UPDATE archive_batches SET step = 'dropped', updated_at = ?2 WHERE id = ?1").bind(batch.id, now).run();
      return "dropped";
    }
    return (await this.deps.d1
      .prepare(
        "UPDATE archive_batches SET ids = ?2, step = 'recorded', count = NULL, sha256 = NULL, fingerprint = NULL, seq_min = NULL, seq_max = NULL, updated_at = ?3 WHERE id = ?1 RETURNING *",
      )
      .bind(batch.id, JSON.stringify(ids), now)
      .first<BatchRow>())!;
  }

  /** A dropped batch's object goes first, then the batch (a crash between leaves the batch, which is dropped again). */
  private async finishDrop(batch: BatchRow) {
    await this.deps.bucket.delete(batch.key);
    await this.deps.d1.prepare("DELETE FROM archive_batches WHERE id = ?1 AND step = 'dropped'").bind(batch.id).run();
    await this.attempts.clear(batch.id);
  }

  /** A batch that keeps failing gives way: its object deleted and it set aside, holding its rows back for a week. */
  private async setAside(batch: BatchRow): Promise<Outcome> {
    await this.deps.d1
      .prepare("UPDATE archive_batches SET step = 'failed', updated_at = ?2 WHERE id = ?1 AND step NOT IN ('done', 'dropped')")
      .bind(batch.id, new Date(this.now()).toISOString())
      .run();
    await this.deps.bucket.delete(batch.key);
    await this.attempts.clear(batch.id);
    return "failed";
  }

  /** Takes the batch one step further. */
  async advance(batch: BatchRow): Promise<BatchRow | Outcome> {
    if (batch.step === "recorded") return this.put(batch);
    if (batch.step === "put") return this.verify(batch);
    if (batch.step === "verified") return this.commit(batch);
    if (batch.step === "dropped") return this.finishDrop(batch).then(() => "dropped" as const);
    return batch.step === "failed" ? "failed" : "done";
  }

  /** Finishes the open batch, else records and finishes the next; false when there was nothing to do, or it did not finish. */
  async runBatch(): Promise<boolean> {
    let current: BatchRow | Outcome | null = (await this.openBatch()) ?? (await this.record());
    if (current === null) return false;
    const batchId = current.id;
    // Counted before any work, so that a run that dies in it (out of memory, say) counts too.
    if (current.step !== "dropped" && (await this.attempts.bump(current.id)) > BATCH_ATTEMPTS) current = await this.setAside(current);
    // A batch whose object keeps failing its check is left for the next run (the hourly one) rather than looped on.
    for (let steps = 0; typeof current === "object" && steps < 12; steps++) current = await this.advance(current);
    if (current === "done") await this.attempts.clear(batchId);
    return current === "done" || current === "dropped" || current === "failed";
  }

  /** Up to `max` batches; true when more may be due. */
  async run(max = BATCHES_PER_RUN): Promise<boolean> {
    for (let i = 0; i < max; i++) if (!(await this.runBatch())) return false;
    return true;
  }
}
