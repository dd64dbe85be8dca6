/**
 * What a batch's events owe the project's integrations, recorded in the same
 * batch: one outbox row per event each enabled webhook wants, and one per
 * event a linked Telegram chat hears of (TELEGRAM_EVENTS, for people who can
 * see the project, not muted, watching it; finished tasks only for the person
 * who created them; no question one agent asks another). The room is the
 * only writer of its project's events, so it knows the last seq before a
 * batch and records exactly the events after it. A batch whose outcome is
 * unknown (it threw) leaves that seq where it was: if the batch did commit,
 * the next one records its events too, and the unique index keeps each once.
 * A project exporting telemetry is owed one delivery per task that finishes
 * (done, failed or cancelled): its span, built when it is sent. A Slack
 * channel a project posts to is owed the events it picked (CHAT_EVENTS by
 * default), and the events that settle a message it was posted (so the
 * message is updated in place; a task's end settles what its messages still
 * ask), in one lane per channel (`team:channel`). Who hears of a project in
 * chat is the directory's to say (chat-recipients.ts): a room on another shard
 * reads it there before a batch that may owe a notice, and records the rows
 * on its own shard, where that shard's lanes deliver them.
 */
import { sql, type SQL } from "drizzle-orm";
import type { OutboxTargetKind } from "../db/schema";
import { CHAT_EVENTS, SETTLING_EVENTS, TASK_ENDING_EVENTS } from "../domain/chat-events";
import { SPAN_ENDING_EVENTS } from "../integrations/telemetry/task-span";
import { statement, type CommittedEvent } from "./statements";
import { boundSlack, boundTelegram, NOBODY, readChatRecipients, slackRecipients, telegramRecipients } from "./chat-recipients";

/** An integration owed a delivery by a batch that committed. */
export interface OutboxTarget {
  kind: OutboxTargetKind;
  id: string;
}

/**
 * The kinds of event Telegram chats hear of, as a literal list: read from json_each, its elements would be rows read
 * for every batch, chats or none. They are constants of the hub's own, never a caller's text.
 */
const sqlList = (types: readonly string[]) => sql.raw(types.map((type) => `'${type}'`).join(", "));
const CHAT_TYPES = sqlList(CHAT_EVENTS);
/** A task that ends settles what its messages still ask, so a channel that posted about it is owed its end too. */
const SETTLING_TYPES = sqlList([...new Set([...SETTLING_EVENTS, ...TASK_ENDING_EVENTS])]);
const SPAN_ENDING_TYPES = sqlList(SPAN_ENDING_EVENTS);
/** The events a Telegram chat or a Slack channel may be owed. */
const NOTICE_TYPES: ReadonlySet<string> = new Set([...CHAT_EVENTS, ...SETTLING_EVENTS, ...TASK_ENDING_EVENTS]);

export class OutboxRecorder {
  private lastSeq: number | null = null;
  /** A batch that may owe chat notices was built and has not been seen to commit: the next one asks for its recipients too. */
  private owesChat = false;

  constructor(
    private readonly d1: D1Database,
    private readonly projectId: string,
    /** The directory, for a room on another shard (null on the directory itself): the chats' recipients are read there. */
    private readonly directory: D1Database | null = null,
  ) {}

  get knowsLastSeq() {
    return this.lastSeq !== null;
  }

  /**
   * The batch's outbox statement: it returns the targets it recorded a delivery for. `types` are those of the events
   * the batch appends; `roundTrips` counts the reads made to build it.
   */
  async statements(now: string, types: readonly string[]): Promise<{ statements: D1PreparedStatement[]; roundTrips: number }> {
    let roundTrips = 0;
    if (this.lastSeq === null) roundTrips++;
    this.lastSeq ??= (await this.d1
      .prepare("SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE project_id = ?1")
      .bind(this.projectId)
      .first<{ seq: number }>())!.seq;
    let people: SQL, anyPeople: SQL, channels: SQL, anyChannel: SQL;
    if (!this.directory) {
      people = telegramRecipients(this.projectId);
      anyPeople = sql`EXISTS (SELECT 1 FROM telegram_links o WHERE o.muted = 0)`;
      channels = slackRecipients(this.projectId);
      anyChannel = sql`EXISTS (SELECT 1 FROM slack_channels o WHERE o.project_id = ${this.projectId} AND o.muted = 0)`;
    } else {
      // Asked only when the batch, or one whose outcome is not known, has an event a chat may hear of.
      this.owesChat ||= types.some((type) => NOTICE_TYPES.has(type));
      const recipients = this.owesChat ? await readChatRecipients(this.directory, this.projectId) : NOBODY;
      if (this.owesChat) roundTrips++;
      people = boundTelegram(recipients.telegram);
      anyPeople = sql.raw(recipients.telegram === "[]" ? "0" : "1");
      channels = boundSlack(recipients.slack);
      anyChannel = sql.raw(recipients.slack === "[]" ? "0" : "1");
    }
    const stmts = [
      statement(
        this.d1,
        sql`INSERT OR IGNORE INTO outbox (id, target_kind, target_id, project_id, seq, event_type, status, attempts, next_attempt_at, created_at)
            SELECT 'msg_' || lower(hex(randomblob(16))), 'webhook', w.id, e.project_id, e.seq, e.type, 'pending', 0, ${now}, ${now}
            FROM events e JOIN webhooks w ON w.project_id = e.project_id AND w.enabled = 1
            -- Each arm first asks, once, whether it has anyone to deliver to: with nobody, it reads next to nothing.
            WHERE EXISTS (SELECT 1 FROM webhooks o WHERE o.project_id = ${this.projectId} AND o.enabled = 1)
              AND e.project_id = ${this.projectId} AND e.seq > ${this.lastSeq}
              AND (w.events IS NULL OR e.type IN (SELECT value FROM json_each(w.events)))
            UNION ALL
            SELECT 'msg_' || lower(hex(randomblob(16))), 'telegram', r.id, e.project_id, e.seq, e.type, 'pending', 0, ${now}, ${now}
            FROM (${people}) r JOIN events e
            WHERE ${anyPeople}
              AND e.project_id = ${this.projectId} AND e.seq > ${this.lastSeq}
              AND e.type IN (${CHAT_TYPES})
              AND (e.type != 'task_completed' OR EXISTS (SELECT 1 FROM tasks t WHERE t.id = e.task_id AND t.created_by = r.email))
              -- a question one agent asks another is for that agent, not for people
              AND (e.type != 'intervention_requested' OR e.data ->> '$.target_session_id' IS NULL)
            UNION ALL
            SELECT 'msg_' || lower(hex(randomblob(16))), 'telemetry', x.project_id, e.project_id, e.seq, e.type, 'pending', 0, ${now}, ${now}
            FROM events e JOIN telemetry_exports x ON x.project_id = e.project_id AND x.disabled_reason IS NULL
            WHERE EXISTS (SELECT 1 FROM telemetry_exports o WHERE o.project_id = ${this.projectId} AND o.disabled_reason IS NULL)
              AND e.project_id = ${this.projectId} AND e.seq > ${this.lastSeq}
              AND e.type IN (${SPAN_ENDING_TYPES}) AND e.task_id IS NOT NULL
            UNION ALL
            SELECT 'msg_' || lower(hex(randomblob(16))), 'slack', c.team_id || ':' || c.channel_id, e.project_id, e.seq, e.type, 'pending', 0, ${now}, ${now}
            FROM (${channels}) c JOIN events e
            WHERE ${anyChannel}
              AND e.project_id = ${this.projectId} AND e.seq > ${this.lastSeq}
              AND (
                (e.type IN (${CHAT_TYPES}) AND (c.events IS NULL OR e.type IN (SELECT value FROM json_each(c.events)))
                  AND (e.type != 'intervention_requested' OR e.data ->> '$.target_session_id' IS NULL))
                -- a settling event only where the channel was told of what it settles, or may be being told now: a row still
                -- pending may be the one in flight, posted before its record is written (the lane skips what settles nothing)
                OR (e.type IN (${SETTLING_TYPES}) AND (
                  EXISTS (SELECT 1 FROM slack_posts p WHERE p.team_id = c.team_id AND p.channel_id = c.channel_id
                          AND p.subject IN ('task:' || e.task_id, 'iv:' || (e.data ->> '$.intervention_id')))
                  OR EXISTS (SELECT 1 FROM outbox q WHERE q.target_kind = 'slack' AND q.target_id = c.team_id || ':' || c.channel_id AND q.status = 'pending')))
              )
            -- by seq (the fifth column)
            ORDER BY 5
            RETURNING target_kind AS outbox_kind, target_id AS outbox_target`,
      ),
    ];
    return { statements: stmts, roundTrips };
  }

  /** The batch committed these events. */
  committed(events: readonly CommittedEvent[]) {
    // Events it wrote but could not hand on (reading them back failed) go with the next batch: it asks again.
    if (events.length > 0) this.owesChat = false;
    for (const e of events) if (this.lastSeq === null || e.seq > this.lastSeq) this.lastSeq = e.seq;
  }
}

/** The targets a batch's outbox statements recorded deliveries for, once each. */
export function outboxTargets(results: D1Result[]): OutboxTarget[] {
  const seen = new Map<string, OutboxTarget>();
  for (const r of results) {
    for (const row of r.results as { outbox_kind?: OutboxTarget["kind"]; outbox_target?: string }[]) {
      if (row.outbox_kind && row.outbox_target) seen.set(`${row.outbox_kind}:${row.outbox_target}`, { kind: row.outbox_kind, id: row.outbox_target });
    }
  }
  return [...seen.values()];
}
