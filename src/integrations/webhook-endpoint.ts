/**
 * One Durable Object per webhook: delivers what the outbox holds for it, in
 * order, one at a time. A delivery that fails holds the ones behind it and is
 * tried again on the schedule (retry-schedule.ts), by alarm; when its tries
 * run out, or too many deliveries wait, the endpoint is disabled through its
 * project's room, which says so in an event. Everything it works from is in
 * D1, so an eviction mid-delivery loses nothing: the delivery is still
 * pending and is sent again, with the same `webhook-id`.
 */
import { DurableObject } from "cloudflare:workers";
import { unseal } from "../auth/sealed";
import type { Env } from "../env";
import { logError } from "../log";
import type { RoomActor, RoomCommand } from "../room/commands";
import { MAX_PENDING_DELIVERIES, nextAttemptAt, RETRY_DELAYS_MS } from "./retry-schedule";
import { isSpecialAddress } from "./target-url";
import { attempt, signedRequest, type AttemptResult } from "./webhook-message";

/** Deliveries read per round trip. */
const PAGE = 25;
/** If the object is evicted mid-drain, its alarm picks the work up again after this. */
const RESUME_AFTER_MS = 30_000;

interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

interface DueRow {
  id: string;
  seq: number | null;
  event_type: string;
  payload: string | null;
  attempts: number;
  next_attempt_at: string;
  event_task_id: string | null;
  event_actor: string | null;
  event_data: string | null;
  event_created_at: string | null;
  created_at: string;
}

/** The link reaches project rooms without importing them (their module reaches the endpoints). */
interface EndpointEnv extends Env {
  PROJECT_ROOM: DurableObjectNamespace;
}
type RoomPort = { execute(actor: RoomActor, command: RoomCommand, options: { view?: boolean }): Promise<unknown> };

const HUB: RoomActor = { kind: "person", userId: "hub", label: "hub" };

export class WebhookEndpoint extends DurableObject<EndpointEnv> {
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

  private drainSoon() {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        try {
          await this.drain();
        } catch (e) {
          logError("webhook delivery failed", { webhook_id: this.ctx.id.name }, e);
          await this.ctx.storage.setAlarm(Date.now() + RETRY_DELAYS_MS[1]);
        }
      } while (this.again);
    })().finally(() => (this.draining = null));
    this.ctx.waitUntil(this.draining);
  }

  /** Delivers due deliveries in order until none is due; an alarm covers the next one that will be. */
  private async drain() {
    const webhookId = this.ctx.id.name;
    if (!webhookId) throw new Error("a WebhookEndpoint is reached only by idFromName(webhookId)");
    await this.ctx.storage.setAlarm(Date.now() + RESUME_AFTER_MS);
    for (;;) {
      const hook = await this.env.DB.prepare("SELECT id, project_id, url, enabled, secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = ?1").bind(webhookId).first<WebhookRow>();
      if (!hook || !hook.enabled) return this.ctx.storage.deleteAlarm();
      const pending = await this.env.DB.prepare("SELECT COUNT(*) AS n FROM outbox WHERE target_kind = 'webhook' AND target_id = ?1 AND status = 'pending'").bind(webhookId).first<{ n: number }>();
      if (pending!.n > MAX_PENDING_DELIVERIES) return this.disable(hook, `more than ${MAX_PENDING_DELIVERIES} deliveries were waiting`);
      const { results: due } = await this.env.DB.prepare(
        `SELECT o.id, o.seq, o.event_type, o.payload, o.attempts, o.next_attempt_at, o.created_at,
                e.task_id AS event_task_id, e.actor AS event_actor, e.data AS event_data, e.created_at AS event_created_at
         FROM outbox o LEFT JOIN events e ON e.project_id = o.project_id AND e.seq = o.seq
         WHERE o.target_kind = 'webhook' AND o.target_id = ?1 AND o.status = 'pending'
         ORDER BY o.created_at, o.seq LIMIT ${PAGE}`,
      )
        .bind(webhookId)
        .all<DueRow>();
      if (due.length === 0) return this.ctx.storage.deleteAlarm();
      const secrets = await this.secretsOf(hook);
      for (const row of due) {
        const at = Date.parse(row.next_attempt_at);
        if (at > Date.now()) return this.ctx.storage.setAlarm(at);
        const result = await this.deliver(hook, row, secrets);
        if (!result.ok) return this.failed(hook, row, result);
      }
    }
  }

  private async secretsOf(hook: WebhookRow): Promise<string[]> {
    const current = await unseal(this.env.DATA_KEY, hook.secret);
    const previousValid = hook.previous_secret && hook.previous_secret_expires_at && Date.parse(hook.previous_secret_expires_at) > Date.now();
    return previousValid ? [current, await unseal(this.env.DATA_KEY, hook.previous_secret!)] : [current];
  }

  private async deliver(hook: WebhookRow, row: DueRow, secrets: string[]): Promise<AttemptResult> {
    const data =
      row.seq === null
        ? (JSON.parse(row.payload ?? "{}") as Record<string, unknown>)
        : { seq: row.seq, project_id: hook.project_id, type: row.event_type, task_id: row.event_task_id, actor: row.event_actor, data: JSON.parse(row.event_data ?? "{}"), created_at: row.event_created_at };
    const message = { id: row.id, type: row.event_type, timestamp: row.event_created_at ?? row.created_at, data };
    const result =
      this.env.WEBHOOK_ALLOW_PRIVATE !== "true" && isSpecialAddress(new URL(hook.url).hostname.replace(/^\[|\]$/g, ""))
        ? { ok: false, statusCode: null, error: "the target is a loopback or private address", durationMs: 0, responseBody: null }
        : await attempt(hook.url, signedRequest(message, secrets));
    const now = new Date().toISOString();
    const attempts = row.attempts + 1;
    await this.env.DB.batch([
      this.env.DB.prepare("INSERT INTO delivery_attempts (outbox_id, attempt, status_code, error, duration_ms, response_body, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)").bind(
        row.id,
        attempts,
        result.statusCode,
        result.error,
        result.durationMs,
        result.responseBody,
        now,
      ),
      this.env.DB.prepare(
        `UPDATE outbox SET attempts = ?2, last_status_code = ?3, last_error = ?4, status = CASE WHEN ?5 THEN 'delivered' ELSE status END, delivered_at = CASE WHEN ?5 THEN ?6 ELSE delivered_at END
         WHERE id = ?1`,
      ).bind(row.id, attempts, result.statusCode, result.error, result.ok ? 1 : 0, now),
    ]);
    return result;
  }

  /** A failed attempt: tried again later, holding the ones behind it, or, with no tries left, the endpoint is given up. */
  private async failed(hook: WebhookRow, row: DueRow, result: AttemptResult) {
    const next = nextAttemptAt(row.attempts + 1, Date.now());
    if (next === null) {
      await this.env.DB.prepare("UPDATE outbox SET status = 'failed' WHERE id = ?1").bind(row.id).run();
      return this.disable(hook, `a delivery failed ${RETRY_DELAYS_MS.length} times over about a day (last: ${result.error})`);
    }
    await this.env.DB.prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE id = ?1").bind(row.id, new Date(next).toISOString()).run();
    await this.ctx.storage.setAlarm(next);
  }

  private async disable(hook: WebhookRow, reason: string) {
    const room = this.env.PROJECT_ROOM.get(this.env.PROJECT_ROOM.idFromName(hook.project_id)) as unknown as RoomPort;
    await room.execute(HUB, { op: "disable_webhook", webhookId: hook.id, reason }, {});
    await this.ctx.storage.deleteAlarm();
  }
}
