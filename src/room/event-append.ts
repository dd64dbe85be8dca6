/**
 * Appends a batch's events to the project's log, and says what it appended.
 *
 * The room is the only writer of its project's events, so once it has seen
 * where the log ends it numbers a batch's events itself, and knows what the
 * batch wrote from how many rows each statement inserted: D1 bills rows that
 * RETURNING hands back twice each, and the end of the log a row more. What
 * the room cannot know it reads: where the log ends before its first batch
 * (and after a batch whose outcome is unknown), an event's trace context it
 * was not given (the task's), and the events of a batch where some guard did
 * not hold (read back after it, which is rare: a concurrent change).
 */
import { sql, type SQL } from "drizzle-orm";
import { errorMentions } from "../db/errors";
import { sessionWritten, statement, webhookWritten, type CommittedEvent, type EventAppend } from "./statements";

/**
 * True when a task's update to `version` applied, asked once the batch's other writes are in: a task's version only
 * grows and only its room writes it, so that version, or a later one a later operation of the same batch set, means
 * it did.
 */
const updateApplied = (taskId: SQL, version: SQL) => sql`EXISTS (SELECT 1 FROM tasks t WHERE t.id = ${taskId} AND t.version >= ${version})`;

/** How much of the events' JSON one statement binds, well under D1's largest value. */
const APPEND_CHUNK_CHARS = 512 * 1024;

const COLUMNS = "project_id, seq, type, task_id, actor, data, traceparent, created_at";

/** One event as bound into the statement, and as the room publishes it once it is known to be written. */
interface Row {
  type: CommittedEvent["type"];
  task_id: string | null;
  data: Record<string, unknown>;
  actor: string;
  at: string;
  guard: (string | number)[] | null;
  traceparent?: string | null;
}

/**
 * The batch numbered its events from an end of the log that was not its end: something other than the room appended to
 * it. The batch rolled back whole; run again, it reads where the log ends.
 */
export const logMovedOn = (e: unknown) => errorMentions(e, "UNIQUE constraint failed: events.project_id, events.seq");

/**
 * What a batch's appends wrote: its events in seq order and where the log ends after them (null: not known), or where
 * to read them from (`since`: the seq before them).
 */
export type Appended = { events: CommittedEvent[]; head: number | null } | { since: number };

export class EventLog {
  /**
   * The last seq of the project's log, once known: null before the room's first batch, and from the moment a batch's
   * appends are built until what it wrote is taken in, so that a batch that failed or whose outcome is unknown leaves it
   * to be read again.
   */
  private head: number | null = null;
  /**
   * The seq after which events committed that were never handed on (reading them back failed): the next batch's
   * read-back starts there, so they go out with its own, in order.
   */
  private unhanded: number | null = null;

  constructor(
    private readonly d1: D1Database,
    private readonly projectId: string,
  ) {}

  /**
   * The statements appending a batch's events, in the order of their
   * operations, placed after the batch's other writes (first, where the log
   * ends when the room does not know). Each operation's events carry its
   * guard, checked then:
   * - a task's, by `updateApplied`;
   * - a session's or webhook's, by its `updated_at`: they are written by
   *   operations that commit alone, so it is still the one the operation
   *   wrote.
   * Seqs are numbered over the rows written, so they leave no gap: with one
   * operation's events alone, all are written or none, so each is the next
   * seq plus its place; with several, a window numbers the rows that pass
   * their guards (D1 counts the rows its sorting reads).
   */
  append(appends: EventAppend[]) {
    const chunks: string[][] = [];
    let size = Infinity;
    for (const { actor, at, events, guard } of appends) {
      const checked =
        guard === null
          ? null
          : "taskId" in guard
            ? ["task", guard.taskId, guard.version]
            : "sessionId" in guard
              ? ["session", guard.sessionId, guard.updatedAt]
              : ["webhook", guard.webhookId, guard.updatedAt];
      const rows = events.map((e) =>
        JSON.stringify({
          type: e.type,
          task_id: e.taskId,
          data: e.data,
          actor,
          at,
          guard: checked,
          ...(e.traceparent !== undefined ? { traceparent: e.traceparent } : {}),
        } satisfies Row),
      );
      const chars = rows.reduce((n, r) => n + r.length + 1, 0);
      if (size + chars > APPEND_CHUNK_CHARS) {
        chunks.push([]);
        size = 0;
      }
      chunks.at(-1)!.push(...rows);
      size += chars;
    }
    const filled = chunks.filter((rows) => rows.length > 0);
    const head = this.head;
    if (filled.length > 0) this.head = null;
    // A task's event given no trace context takes its task's, which only the statement knows: it returns its rows.
    const returning = appends.some((a) => a.events.some((e) => e.taskId !== null && e.traceparent === undefined));
    const oneGuard = appends.length === 1;
    // The first statement numbers from the known end of the log, so that one moved on by something else fails it on the
    // primary key (logMovedOn); each later one follows where the statements before it ended.
    const inserts = filled.map((rows, i) => this.insert(rows, oneGuard, head !== null && i === 0 ? head + 1 : null, returning));
    const ask = head === null && !returning && filled.length > 0 ? [this.end()] : [];
    return {
      statements: [...ask, ...inserts],
      /** What the batch wrote, from the statements' results. */
      read: (results: D1Result[]): Appended => {
        if (returning || filled.length === 0) {
          const events = committedEvents(results);
          return { events, head: events.at(-1)?.seq ?? head };
        }
        const since = head ?? (results[0]!.results[0] as { head: number }).head;
        let last = since;
        const events: CommittedEvent[] = [];
        for (const [i, rows] of filled.entries()) {
          const changes = results[ask.length + i]!.meta.changes;
          // One operation's events are all written or none; several operations' may be any of them.
          if (changes === 0 && oneGuard) continue;
          if (changes !== rows.length) return { since };
          for (const text of rows) events.push(this.committed(JSON.parse(text) as Row, ++last));
        }
        return { events, head: last };
      },
    };
  }

  /** The batch committed: the log ends here now (null: not known). */
  took(head: number | null) {
    this.head = head;
  }

  /**
   * The events a committed batch wrote, with any an earlier batch could not hand on, and where the log ends taken in:
   * read back (`readBack`) when its statements did not say. Reading back may fail after the batch committed: its
   * events then wait for the next batch's (`failure`), and the batch still answers as it committed.
   */
  async written(appended: Appended): Promise<{ events: CommittedEvent[]; readBack: boolean; failure?: unknown }> {
    const since = this.unhanded ?? ("since" in appended ? appended.since : null);
    if (since === null) {
      const { events, head } = appended as Extract<Appended, { events: CommittedEvent[] }>;
      this.took(head);
      return { events, readBack: false };
    }
    try {
      const events = await this.since(since);
      this.unhanded = null;
      this.took(events.at(-1)?.seq ?? since);
      return { events, readBack: true };
    } catch (failure) {
      this.unhanded = since;
      this.took(null);
      return { events: [], readBack: true, failure };
    }
  }

  /** The events after `since`, read back when a batch's statements did not say what they wrote. */
  async since(since: number): Promise<CommittedEvent[]> {
    const { results } = await this.d1
      .prepare(`SELECT ${COLUMNS} FROM events WHERE project_id = ?1 AND seq > ?2 ORDER BY seq`)
      .bind(this.projectId, since)
      .all();
    return committedEvents([{ results } as D1Result]);
  }

  private end() {
    return this.d1.prepare("SELECT COALESCE((SELECT MAX(seq) FROM events WHERE project_id = ?1), 0) AS head").bind(this.projectId);
  }

  private committed(r: Row, seq: number): CommittedEvent {
    return {
      project_id: this.projectId,
      seq,
      type: r.type,
      task_id: r.task_id,
      actor: r.actor,
      data: r.data,
      traceparent: r.traceparent ?? null,
      created_at: r.at,
    };
  }

  private insert(rows: string[], oneGuard: boolean, first: number | null, returning: boolean) {
    // MAX alone in its own subquery is one step down the primary key; inside an expression SQLite reads every event.
    const next = first ?? sql`COALESCE((SELECT MAX(seq) FROM events WHERE project_id = ${this.projectId}), 0) + 1`;
    return statement(
      this.d1,
      sql`
      INSERT INTO events (${sql.raw(COLUMNS)})
      SELECT ${this.projectId}, base.next + ${oneGuard ? sql`e.key` : sql`row_number() OVER (ORDER BY e.key) - 1`}, e.value ->> 'type', e.value ->> 'task_id', e.value ->> 'actor', e.value -> 'data',
             COALESCE(e.value ->> 'traceparent', (SELECT t.traceparent FROM tasks t WHERE t.id = e.value ->> 'task_id')), e.value ->> 'at'
      FROM (SELECT ${next} AS next) AS base, json_each(${`[${rows.join(",")}]`}) AS e
      WHERE CASE e.value ->> '$.guard[0]'
        WHEN 'task' THEN ${updateApplied(sql`e.value ->> '$.guard[1]'`, sql`e.value ->> '$.guard[2]'`)}
        WHEN 'session' THEN ${sessionWritten(sql`e.value ->> '$.guard[1]'`, sql`e.value ->> '$.guard[2]'`)}
        WHEN 'webhook' THEN ${webhookWritten(sql`e.value ->> '$.guard[1]'`, sql`e.value ->> '$.guard[2]'`)}
        ELSE 1 END
      ${oneGuard ? sql`` : sql`ORDER BY e.key`}
      ${returning ? sql.raw(`RETURNING ${COLUMNS}`) : sql``}`,
    );
  }
}

/** The events statements returned, in seq order. */
function committedEvents(results: D1Result[]): CommittedEvent[] {
  return results
    .flatMap((r) => r.results as Record<string, unknown>[])
    .map((row) => ({ ...(row as unknown as CommittedEvent), data: JSON.parse(row.data as string) }))
    .sort((a, b) => a.seq - b.seq);
}
