/**
 * What every integration's delivery object shares: one object per target
 * (a webhook, a Telegram chat, a project's telemetry export) drains that
 * target's outbox rows in order, one at a time, woken by the project rooms
 * after they commit and by its alarm for retries. Everything it works from is in D1, so an eviction mid-delivery
 * loses nothing: the row is still pending and is sent again.
 */
import { DurableObject } from "cloudflare:workers";
import type { OutboxTargetKind } from "../db/schema";
import { DIRECTORY, isShard, onEveryShard, shardD1, shardNames } from "../db/shards";
import { log, logError } from "../runtime/log";
import type { RoomReachingEnv } from "../runtime/room-rpc";
import { checkTargetFor } from "./dns";
import { chatLaneName, chatLaneOf } from "./lane-names";
import { RETRY_DELAYS_MS } from "./retry-schedule";
import type { TargetCheck } from "./target-url";

/** Rows read per round trip. */
export const PAGE = 25;
/** Deliveries one drain makes at most; the alarm takes the rest, so no drain outlives an alarm's time. */
export const MAX_PER_DRAIN = 200;
/** If the object is evicted mid-drain, its alarm picks the work up again after this. */
const RESUME_AFTER_MS = 30_000;
/** How soon a lane whose project is moving looks again. */
const MOVING_RETRY_MS = 5000;
/** The bindings of the chats' lanes, by kind. */
const CHAT_LANES: Partial<Record<OutboxTargetKind, string>> = { telegram: "TELEGRAM_CHAT", slack: "SLACK_CHANNEL" };
/** How long one check of a target's URL serves its deliveries. */
const TARGET_CHECK_TTL_MS = 30_000;

/** An outbox row with the event it stands for (none for a test delivery). */
export interface DueRow {
  id: string;
  project_id: string;
  seq: number | null;
  event_type: string;
  payload: string | null;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
  event_task_id: string | null;
  event_actor: string | null;
  event_data: string | null;
  event_traceparent: string | null;
  event_created_at: string | null;
}

export interface AttemptRecord {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
}

export abstract class OutboxLane extends DurableObject<RoomReachingEnv> {
  protected abstract readonly kind: OutboxTargetKind;
  private draining: Promise<void> | null = null;
  /** Work arrived while a drain ran: it drains again when done. */
  private again = false;

  /** New deliveries are waiting (or one was asked for again): deliver now. */
  async wake() {
    this.drainSoon();
  }

  override async alarm() {
    this.drainSoon();
    await this.draining;
  }

  /**
   * A lane of one project's (a webhook, a telemetry export) reads and writes its outbox where the project lives: the
   * shard the directory names, read again before each drain (a move changes it; src/room/room-move.ts). While the project
   * moves it delivers nothing: a delivery recorded on the source after its row was copied would be made again from the
   * target. A chat's lane (Telegram, Slack) drains the shard its name says (lane-names.ts), reading the chat's own rows
   * (links, people, installations, channels) in the directory; it holds rows of a project on the move (heldRows).
   */
  protected readonly directory = this.env.DB;
  private projectId: string | null | undefined;
  /** Whether to deliver now (the project is not moving); `this.env.DB` is then its shard. */
  private async onItsShard(): Promise<boolean> {
    if (this.kind !== "webhook" && this.kind !== "telemetry") {
      const { shard } = chatLaneOf(this.laneName);
      if (shard !== DIRECTORY) this.env = { ...this.env, DB: shardD1(this.env, shard) };
      return true;
    }
    this.projectId ??= this.kind === "telemetry" ? this.targetId : await this.webhookProject();
    const home = this.projectId
      ? await this.directory
          .prepare("SELECT shard, moving_to FROM projects WHERE id = ?1")
          .bind(this.projectId)
          .first<{ shard: string; moving_to: string | null }>()
      : null;
    if (home?.moving_to) return false;
    const shard = home && isShard(this.env, home.shard) ? home.shard : DIRECTORY;
    this.env = { ...this.env, DB: shard === DIRECTORY ? this.directory : shardD1(this.env, shard) };
    return true;
  }

  /** Whether the last page read held rows back (heldRows): the lane then looks again soon rather than sleeping. */
  private holding = false;

  /**
   * Of a chat lane's page, the ids of the rows to leave for now: those of a project that is moving, or that lives
   * on another shard by now (the copy its move made there is the one delivered; this one goes as the move deletes it).
   * The chat's lane on that shard is woken for them.
   */
  protected async heldRows(rows: DueRow[]): Promise<Set<string>> {
    // With one shard bound no project moves.
    const ids = shardNames(this.env).length > 1 ? [...new Set(rows.map((r) => r.project_id))] : [];
    const { results } = ids.length
      ? await this.directory
          .prepare("SELECT id, shard, moving_to FROM projects WHERE id IN (SELECT value FROM json_each(?1))")
          .bind(JSON.stringify(ids))
          .all<{ id: string; shard: string; moving_to: string | null }>()
      : { results: [] };
    const here = chatLaneOf(this.laneName).shard;
    const away = new Map(results.flatMap((p) => (p.moving_to !== null || this.homeOf(p.shard) !== here ? [[p.id, p] as const] : [])));
    // Every row of such a project, a notice with no event (a denied tool call) as much as an event's: the move copies both.
    const held = new Set(rows.flatMap((r) => (away.has(r.project_id) ? [r.id] : [])));
    this.holding = held.size > 0;
    // Its lane where they go (or went) holds their copies until the project is there, then delivers them.
    for (const shard of new Set([...away.values()].map((p) => this.homeOf(p.moving_to ?? p.shard)))) {
      if (shard === here) continue;
      const lanes = (this.env as unknown as Record<string, DurableObjectNamespace<OutboxLane>>)[CHAT_LANES[this.kind]!]!;
      const lane = lanes.get(lanes.idFromName(chatLaneName(this.targetId, shard)));
      this.ctx.waitUntil(
        lane.wake().catch((e) => logError(`waking a ${this.kind} lane failed`, { operation: `${this.kind}_delivery`, target_id: this.laneName }, e)),
      );
    }
    return held;
  }

  private homeOf = (shard: string) => (isShard(this.env, shard) ? shard : DIRECTORY);

  /** Nothing more to deliver now: back soon for rows held, else asleep until woken. */
  protected idle() {
    return this.holding ? this.ctx.storage.setAlarm(Date.now() + MOVING_RETRY_MS) : this.ctx.storage.deleteAlarm();
  }

  /** The webhook's project, from its row on whichever shard holds it (null once it is gone). */
  private async webhookProject(): Promise<string | null> {
    const rows = await onEveryShard({ ...this.env, DB: this.directory }, (d1) =>
      d1.prepare("SELECT project_id FROM webhooks WHERE id = ?1").bind(this.targetId).first<{ project_id: string }>(),
    );
    return rows.find((r) => r !== null)?.project_id ?? null;
  }

  /** One drain: deliver what is due, in order, and leave an alarm for what will be. */
  protected abstract drain(): Promise<void>;

  private get laneName(): string {
    const name = this.ctx.id.name;
    if (!name) throw new Error(`a ${this.kind} lane is reached only by idFromName(its id)`);
    return name;
  }

  /** The target's id (a chat's lane named for another shard too: lane-names.ts). */
  protected get targetId(): string {
    return this.kind in CHAT_LANES ? chatLaneOf(this.laneName).id : this.laneName;
  }

  private drainSoon() {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        try {
          await this.ctx.storage.setAlarm(Date.now() + RESUME_AFTER_MS);
          if (await this.onItsShard()) await this.drain();
          // Delivered from the new shard once the move has switched.
          else await this.ctx.storage.setAlarm(Date.now() + MOVING_RETRY_MS);
        } catch (e) {
          logError(`${this.kind} delivery failed`, { operation: `${this.kind}_delivery`, target_id: this.ctx.id.name }, e);
          await this.ctx.storage.setAlarm(Date.now() + RETRY_DELAYS_MS[1]);
        }
      } while (this.again);
    })().finally(() => (this.draining = null));
    this.ctx.waitUntil(this.draining);
  }

  /** The last check of the target: a drain of many deliveries resolves the name once per TARGET_CHECK_TTL_MS, not per attempt. */
  private lastCheck?: { url: string; at: number; result: TargetCheck };

  /** Whether a URL the hub posts to (a webhook's, a collector's) may be reached now: its name resolved and checked again. */
  protected async checkTarget(url: string): Promise<TargetCheck> {
    const now = Date.now();
    if (this.lastCheck?.url === url && now - this.lastCheck.at < TARGET_CHECK_TTL_MS) return this.lastCheck.result;
    const result = await checkTargetFor(this.env, url);
    this.lastCheck = { url, at: now, result };
    return result;
  }

  /** How many rows wait (one row: `n`), to read in a batch with others. */
  protected pendingCount(): D1PreparedStatement {
    return this.env.DB.prepare("SELECT COUNT(*) AS n FROM outbox WHERE target_kind = ?1 AND target_id = ?2 AND status = 'pending'").bind(
      this.kind,
      this.targetId,
    );
  }

  /** The next pending rows, oldest first, with their events, to read in a batch with others. */
  protected due(): D1PreparedStatement {
    return this.env.DB.prepare(
      `SELECT o.id, o.project_id, o.seq, o.event_type, o.payload, o.attempts, o.next_attempt_at, o.created_at,
              e.task_id AS event_task_id, e.actor AS event_actor, e.data AS event_data, e.traceparent AS event_traceparent, e.created_at AS event_created_at
       FROM outbox o LEFT JOIN events e ON e.project_id = o.project_id AND e.seq = o.seq
       WHERE o.target_kind = ?1 AND o.target_id = ?2 AND o.status = 'pending'
       ORDER BY o.created_at, o.seq LIMIT ${PAGE}`,
    ).bind(this.kind, this.targetId);
  }

  /**
   * Logs an attempt and what it made of the row: delivered, or still pending; `also` is written in the same batch (what
   * the lane keeps of a delivery, such as a posted message's id, stands or falls with the row's record).
   */
  protected async record(row: DueRow, result: AttemptRecord, also: D1PreparedStatement[] = []) {
    const now = new Date().toISOString();
    const attempts = row.attempts + 1;
    await this.env.DB.batch([
      ...also,
      // Numbered across redeliveries too (a redelivery starts the row's tries afresh, not its log).
      this.env.DB.prepare(
        "INSERT INTO delivery_attempts (outbox_id, attempt, status_code, error, duration_ms, response_body, at) VALUES (?1, (SELECT COUNT(*) + 1 FROM delivery_attempts WHERE outbox_id = ?1), ?2, ?3, ?4, ?5, ?6)",
      ).bind(row.id, result.statusCode, result.error, result.durationMs, result.responseBody, now),
      this.env.DB.prepare(
        `UPDATE outbox SET attempts = ?2, last_status_code = ?3, last_error = ?4, status = CASE WHEN ?5 THEN 'delivered' ELSE status END, delivered_at = CASE WHEN ?5 THEN ?6 ELSE delivered_at END
         WHERE id = ?1`,
      ).bind(row.id, attempts, result.statusCode, result.error, result.ok ? 1 : 0, now),
    ]);
    // Only the status code: a receiver's error text or URL may carry what it was given (Slack-style hooks keep a token in the path).
    log("info", "delivery", {
      project_id: row.project_id,
      task_id: row.event_task_id ?? undefined,
      operation: `${this.kind}_delivery`,
      target_id: this.targetId,
      event_type: row.event_type,
      seq: row.seq,
      attempt: attempts,
      outcome: result.ok ? "delivered" : "failed",
      status_code: result.statusCode,
      duration_ms: result.durationMs,
    });
  }

  /** Tries the row again at `at` (holding what follows it). */
  protected async retryAt(row: DueRow, at: number) {
    await this.env.DB.prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE id = ?1").bind(row.id, new Date(at).toISOString()).run();
    await this.ctx.storage.setAlarm(at);
  }

  protected async giveUp(row: DueRow) {
    await this.env.DB.prepare("UPDATE outbox SET status = 'failed' WHERE id = ?1").bind(row.id).run();
  }
}
