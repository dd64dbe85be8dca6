/**
 * Moves a project's old rows from D1 to R2, a batch at a time, in four steps that each leave a record in D1, so a
 * restart resumes a batch from the step it reached:
 *  1. record: the batch (its kind, day, row ids and object key) is written before anything else;
 *  2. put: the rows are read (with a fingerprint of what they are) and put to R2 as gzip NDJSON, with the count and
 *     sha256 recorded;
 *  3. verify: the object is read back; its count and sha256 must be those recorded (else back to step 2);
 *  4. commit: one D1 batch deletes the rows, records where each archived task lives and marks the batch done; only if
 *     the rows still match the fingerprint (else the batch is dropped with its object, and its rows wait for another).
 * Steps 1 and 4 run in the room's queue (`serialise`), between its operations; reading and the R2 I/O run outside it.
 * Nothing is deleted before its copy was read back, and a row is in at most one open batch, so nothing is lost or
 * duplicated whichever step a crash interrupts.
 */
import type { ArchiveKind } from "../db/schema";
import { projectSettingsOf } from "../domain/project-settings";
import { decodeNdjson, encodeNdjson, sha256Hex } from "./codec";
import { deliverySource, permissionLogSource } from "./log-sources";
import { archiveKey, BATCHES_PER_RUN, cutoffOf, seqRange } from "./plan";
import type { ArchiveSource } from "./sources";
import { taskSource } from "./task-source";

export interface BatchRow {
  id: string;
  project_id: string;
  kind: ArchiveKind;
  day: string;
  key: string;
  ids: string;
  step: "recorded" | "put" | "verified" | "done";
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
  now?: () => number;
}

/** Deliveries that are over are kept a week in D1 when not archived (cron/maintenance.ts): archived no later. */
export const DELIVERY_KEEP_DAYS = 7;

export type Outcome = "done" | "dropped" | "retry";

export class Archiver {
  private readonly sources: Record<ArchiveKind, ArchiveSource>;

  constructor(private readonly deps: ArchiverDeps) {
    this.sources = {
      tasks: taskSource(deps.d1, deps.projectId),
      permission_log: permissionLogSource(deps.d1, deps.projectId),
      deliveries: deliverySource(deps.d1, deps.projectId),
    };
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

  /** The project's oldest batch not yet done. */
  openBatch(): Promise<BatchRow | null> {
    return this.deps.d1
      .prepare("SELECT * FROM archive_batches WHERE project_id = ?1 AND step != 'done' ORDER BY created_at, id LIMIT 1")
      .bind(this.deps.projectId)
      .first<BatchRow>();
  }

  /** Step 1: records the next batch of rows due (the first kind that has any), in the room's queue; null when none is. */
  async record(): Promise<BatchRow | null> {
    const cutoffs = await this.cutoffs();
    return this.deps.serialise(async () => {
      for (const kind of ["tasks", "permission_log", "deliveries"] as const) {
        const cutoff = cutoffs[kind];
        if (!cutoff) continue;
        const due = await this.sources[kind].due(cutoff);
        if (!due) continue;
        const id = crypto.randomUUID();
        const now = new Date(this.now()).toISOString();
        const key = archiveKey(this.deps.projectId, kind, due.day, id);
        const row = await this.deps.d1
          .prepare(
            "INSERT INTO archive_batches (id, project_id, kind, day, key, ids, step, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'recorded', ?7, ?7) RETURNING *",
          )
          .bind(id, this.deps.projectId, kind, due.day, key, JSON.stringify(due.ids), now)
          .first<BatchRow>();
        return row;
      }
      return null;
    });
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

  /** Step 4, in the room's queue: the rows deleted and the batch done in one D1 batch, if they are still what was put. */
  async commit(batch: BatchRow): Promise<Outcome> {
    const source = this.sources[batch.kind];
    const ids = JSON.parse(batch.ids) as string[];
    const outcome = await this.deps.serialise(async (): Promise<Outcome | "settled"> => {
      // Another run may have settled it meanwhile (it is then done, or gone with its object).
      const step = await this.deps.d1.prepare("SELECT step FROM archive_batches WHERE id = ?1").bind(batch.id).first<string>("step");
      if (step !== "verified") return "settled";
      if ((await source.fingerprint(ids)) !== batch.fingerprint) {
        // Changed since it was read (a retry, a late note): the rows stay, and are taken again once they are due.
        await this.deps.d1.prepare("DELETE FROM archive_batches WHERE id = ?1 AND step = 'verified'").bind(batch.id).run();
        return "dropped";
      }
      const d1 = this.deps.d1;
      const index =
        batch.kind === "tasks"
          ? [
              d1
                .prepare(
                  `INSERT INTO archived_tasks (task_id, project_id, batch_id, key, day, seq_min, seq_max)
                   SELECT value, ?1, ?2, ?3, ?4, ?5, ?6 FROM json_each(?7)`,
                )
                .bind(batch.project_id, batch.id, batch.key, batch.day, batch.seq_min, batch.seq_max, batch.ids),
            ]
          : [];
      await d1.batch([
        ...source.deletions(ids),
        ...index,
        d1.prepare("UPDATE archive_batches SET step = 'done', updated_at = ?2 WHERE id = ?1").bind(batch.id, new Date(this.now()).toISOString()),
      ]);
      if (batch.kind === "tasks") this.deps.forgetTasks?.();
      return "done";
    });
    if (outcome === "dropped") await this.deps.bucket.delete(batch.key);
    return outcome === "settled" ? "retry" : outcome;
  }

  /** Takes the batch one step further. */
  async advance(batch: BatchRow): Promise<BatchRow | Outcome> {
    if (batch.step === "recorded") return this.put(batch);
    if (batch.step === "put") return this.verify(batch);
    if (batch.step === "verified") return this.commit(batch);
    return "done";
  }

  /** Finishes the open batch, else records and finishes the next; false when there was nothing to do, or it did not finish. */
  async runBatch(): Promise<boolean> {
    let current: BatchRow | Outcome | null = (await this.openBatch()) ?? (await this.record());
    if (current === null) return false;
    // A batch whose object keeps failing its check is left for the next run (the hourly one) rather than looped on.
    for (let steps = 0; typeof current === "object" && steps < 8; steps++) current = await this.advance(current);
    return current === "done" || current === "dropped";
  }

  /** Up to `max` batches; true when more may be due. */
  async run(max = BATCHES_PER_RUN): Promise<boolean> {
    for (let i = 0; i < max; i++) if (!(await this.runBatch())) return false;
    return true;
  }
}
