/**
 * The room's intake of usage points. A point is kept in the room's own storage before its sender is answered
 * (a cumulative one as the delta it adds since its series' last value, which is kept beside it in the same
 * transaction), and the points gathered meanwhile go to D1 together, about once a second, as one `record_usage`
 * operation in the room's queue: a few roll-up rows however many points. A batch is named before it is sent and
 * keeps its name until its rows are gone here, so one sent again after a crash is recognised (operations/usage.ts).
 */
import { countingRoundTrips, noRoundTrips } from "../db/round-trips";
import { cumulativeDelta, type UsagePoint } from "../domain/usage";
import { logError } from "../runtime/log";
import { HUB_ACTOR } from "../runtime/room-rpc";
import type { RoomWriter } from "./room-writer";

/** How long points gather before they go to D1: long enough that a batch holds many of each session's points. */
export const USAGE_FLUSH_MS = 1000;
/** When a batch that failed is tried again (by the room's alarm, which also covers a restart). */
const RETRY_MS = 5000;
/** Stored posts one batch takes at most. */
const POSTS_PER_BATCH = 200;
/** A cumulative series not seen for this long is forgotten: its exporter is gone. */
const SERIES_KEPT_MS = 7 * 24 * 3600 * 1000;

/** What this instance of the intake has counted since it started: points in, and the D1 rows its batches wrote for them. */
export interface UsageTally {
  points: number;
  deltas: number;
  batches: number;
  rowsWritten: number;
}

export class UsageIntake {
  private timer: ReturnType<typeof setTimeout> | null = null;
  readonly tally: UsageTally = { points: 0, deltas: 0, batches: 0, rowsWritten: 0 };

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly writer: RoomWriter,
    private readonly scheduleAlarm: (at: number) => Promise<void>,
  ) {
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS usage_series (series TEXT PRIMARY KEY, started_at TEXT NOT NULL, value REAL NOT NULL, seen_at TEXT NOT NULL)`);
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS usage_pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, batch TEXT, points TEXT NOT NULL)`);
  }

  /** Keeps the points durably (cumulative ones as deltas); answers how many of them add anything. */
  async accept(points: readonly UsagePoint[]): Promise<{ deltas: number; tally: UsageTally }> {
    const now = new Date().toISOString();
    const deltas = this.storage.transactionSync(() => {
      const kept: UsagePoint[] = [];
      for (const { cumulative, ...point } of points) {
        if (!cumulative) {
          if (point.value > 0) kept.push(point);
          continue;
        }
        const [last] = this.storage.sql
          .exec<{ started_at: string; value: number }>("SELECT started_at, value FROM usage_series WHERE series = ?", cumulative.series)
          .toArray();
        const { delta, next } = cumulativeDelta(last && { startedAt: last.started_at, value: last.value }, {
          startedAt: cumulative.startedAt,
          value: point.value,
        });
        this.storage.sql.exec(
          "INSERT INTO usage_series (series, started_at, value, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (series) DO UPDATE SET started_at = excluded.started_at, value = excluded.value, seen_at = excluded.seen_at",
          cumulative.series,
          next.startedAt,
          next.value,
          now,
        );
        if (delta > 0) kept.push({ ...point, value: delta });
      }
      if (kept.length > 0) this.storage.sql.exec("INSERT INTO usage_pending (points) VALUES (?)", JSON.stringify(kept));
      return kept.length;
    });
    this.tally.points += points.length;
    this.tally.deltas += deltas;
    if (deltas > 0) await this.soon();
    return { deltas, tally: { ...this.tally } };
  }

  /** Points are waiting: a batch within a second, and the alarm as a net should this instance go first. */
  private async soon() {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, USAGE_FLUSH_MS);
    await this.scheduleAlarm(Date.now() + USAGE_FLUSH_MS + RETRY_MS);
  }

  /** This intake's shard is the project's no more (it moved): its timer goes; the points wait in storage for the next intake. */
  stop() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Sends what is waiting to D1 in the room's queue; answers when to look again (null: nothing left). */
  flush(): Promise<number | null> {
    return this.writer.serialise(async () => {
      try {
        for (let claimed = this.claim(); claimed; claimed = this.claim()) {
          const { batch, points, retry } = claimed;
          const billed = noRoundTrips();
          const command = { op: "record_usage" as const, batchId: batch, points, retry };
          const answer = await countingRoundTrips(billed, () => this.writer.apply({ actor: HUB_ACTOR, command, withView: false }));
          // The project is moving (or this writer's shard is left): the batch keeps its name and goes after the move.
          if (!answer.ok && answer.problem.status === 503) return Date.now() + RETRY_MS;
          this.tally.batches++;
          this.tally.rowsWritten += billed.rowsWritten;
          if (!answer.ok) logError("usage batch refused", { operation: "record_usage" }, answer.problem.detail);
          this.storage.sql.exec("DELETE FROM usage_pending WHERE batch = ?", batch);
        }
        this.storage.sql.exec("DELETE FROM usage_series WHERE seen_at < ?", new Date(Date.now() - SERIES_KEPT_MS).toISOString());
        return null;
      } catch (e) {
        logError("recording usage failed: tried again shortly", { operation: "record_usage" }, e);
        return Date.now() + RETRY_MS;
      }
    });
  }

  /** The batch to send: one named before and not known to be done (it may have committed), else the oldest posts, named now. */
  private claim(): { batch: string; points: UsagePoint[]; retry: boolean } | null {
    const sql = this.storage.sql;
    const [named] = sql.exec<{ batch: string }>("SELECT batch FROM usage_pending WHERE batch IS NOT NULL LIMIT 1").toArray();
    let retry = true;
    let batch = named?.batch;
    if (!batch) {
      const [last] = sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM (SELECT seq FROM usage_pending ORDER BY seq LIMIT ?)", POSTS_PER_BATCH).toArray();
      if (last?.seq == null) return null;
      batch = crypto.randomUUID();
      retry = false;
      sql.exec("UPDATE usage_pending SET batch = ? WHERE seq <= ?", batch, last.seq);
    }
    const rows = sql.exec<{ points: string }>("SELECT points FROM usage_pending WHERE batch = ? ORDER BY seq", batch).toArray();
    return { batch, retry, points: rows.flatMap((r) => JSON.parse(r.points) as UsagePoint[]) };
  }
}
