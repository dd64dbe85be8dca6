/** What one kind of archive takes from D1: which rows are due, what they are as records, and how they leave. */
import type { ArchiveKind } from "../db/schema";
import type { ArchiveRecord } from "./records";

export interface Gathered {
  records: ArchiveRecord[];
  /** What the rows are now: read again before they are deleted, which they are only if it is the same. */
  fingerprint: string;
  seqs: number[];
}

export interface ArchiveSource {
  kind: ArchiveKind;
  /** The next batch's rows (of one day) older than `cutoff`, not already in a batch; null when none is due. Run outside the room's queue: the commit checks again. */
  due(cutoff: string): Promise<{ day: string; ids: string[] } | null>;
  /** The rows as records, and their fingerprint, read in one transaction. */
  gather(ids: readonly string[]): Promise<Gathered>;
  /** SQL text of a scalar that is the fingerprint of the rows ?2 (a JSON list) of project ?1. */
  fingerprintSql: string;
  /**
   * SQL text selecting (as `value`) the ids of ?2 that are no longer due with cutoff ?3 (project ?1): gone, changed
   * back (a retry, a redelivery), or held in D1 by something that came after the batch was recorded.
   */
  notDueSql: string;
  /** The statements that delete the rows, each only while `guard` (SQL text) holds, in the batch that records the batch done. */
  deletions(ids: readonly string[], guard: string): D1PreparedStatement[];
}

/** SQL text: the ids already in one of the project's batches of this kind not yet done (?1 is the project). */
export const inOpenBatch = (kind: ArchiveKind) =>
  `(SELECT j.value FROM archive_batches b, json_each(b.ids) j WHERE b.project_id = ?1 AND b.kind = '${kind}' AND b.step != 'done')`;
