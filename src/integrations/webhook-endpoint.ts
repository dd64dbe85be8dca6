/**
 * One Durable Object per webhook: delivers what the outbox holds for it, in
 * order (outbox-lane.ts). A delivery that fails holds the ones behind it and
 * is tried again on the schedule (retry-schedule.ts), with the same
 * `webhook-id`; when its tries run out, or too many deliveries wait, the
 * endpoint is disabled through its project's room, which says so in an event.
 * Delivery is at least once: a delivery is marked delivered only after its
 * answer, so one the receiver took just before the object was lost is sent
 * again, with the same `webhook-id` the receiver deduplicates on.
 */
import { unseal } from "../auth/sealed";
import { HUB_ACTOR, executeInRoom } from "../runtime/room-rpc";
import { MAX_PER_DRAIN, OutboxLane, PAGE, type DueRow } from "./outbox-lane";
import { MAX_PENDING_DELIVERIES, nextAttemptAt, RETRY_DELAYS_MS } from "./retry-schedule";
import { attempt, signedRequest, type AttemptResult } from "./webhook-message";

interface WebhookRow {
  id: string;
  project_id: string;
  url: string;
  enabled: number;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
}

export class WebhookEndpoint extends OutboxLane {
  protected readonly kind = "webhook";

  protected async drain() {
    for (let sent = 0; ;) {
      // One round trip for what a round needs: the webhook, how much waits, and the next page.
      const [hooks, pending, page] = await this.env.DB.batch([
        this.env.DB.prepare("SELECT id, project_id, url, enabled, secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = ?1").bind(
          this.targetId,
        ),
        this.pendingCount(),
        this.due(),
      ]);
      const hook = (hooks!.results as WebhookRow[])[0];
      const due = page!.results as DueRow[];
      if (!hook || !hook.enabled) return this.ctx.storage.deleteAlarm();
      if ((pending!.results as { n: number }[])[0]!.n > MAX_PENDING_DELIVERIES) return this.overflowed(hook);
      if (due.length === 0) return this.ctx.storage.deleteAlarm();
      const secrets = await this.secretsOf(hook);
      for (const row of due) {
        const at = Date.parse(row.next_attempt_at);
        if (at > Date.now()) return this.ctx.storage.setAlarm(at);
        if (sent++ >= MAX_PER_DRAIN) return this.ctx.storage.setAlarm(Date.now());
        const result = await this.deliver(hook, row, secrets);
        await this.record(row, result);
        if (result.ok) continue;
        const next = nextAttemptAt(row.attempts + 1, Date.now());
        if (next !== null) return this.retryAt(row, next);
        await this.giveUp(row);
        return this.disable(hook, `a delivery failed ${RETRY_DELAYS_MS.length} times over about a day (last: ${result.error})`);
      }
      // A short page was all there was; anything recorded since woke the lane, which drains again.
      if (due.length < PAGE) return this.ctx.storage.deleteAlarm();
    }
  }

  private async secretsOf(hook: WebhookRow): Promise<string[]> {
    const current = await unseal(this.env.DATA_KEY, hook.secret);
    const previousValid = hook.previous_secret && hook.previous_secret_expires_at && Date.parse(hook.previous_secret_expires_at) > Date.now();
    return previousValid ? [current, await unseal(this.env.DATA_KEY, hook.previous_secret!)] : [current];
  }

  private async deliver(hook: WebhookRow, row: DueRow, secrets: string[]): Promise<AttemptResult> {
    // The URL was checked when saved, but a name's addresses change: it is resolved and checked again before the
    // attempts, at most TARGET_CHECK_TTL_MS apart (two DNS-over-HTTPS lookups each). The address checked cannot be pinned (a Worker's fetch cannot be told which address to connect to),
    // so a name switching addresses within the moment between this lookup and fetch's own is not caught here;
    // Cloudflare's network does not let a Worker reach private addresses in any case. A refused or unresolvable
    // target fails the attempt, which is retried on the schedule like any other failure.
    const target = await this.checkTarget(hook.url);
    if (!target.ok)
      return { ok: false, statusCode: null, error: `not sent: the target failed its check (${target.message})`, durationMs: 0, responseBody: null };
    const data =
      row.seq === null
        ? (JSON.parse(row.payload ?? "{}") as Record<string, unknown>)
        : {
            seq: row.seq,
            project_id: hook.project_id,
            type: row.event_type,
            task_id: row.event_task_id,
            actor: row.event_actor,
            data: JSON.parse(row.event_data ?? "{}"),
            traceparent: row.event_traceparent,
            created_at: row.event_created_at,
          };
    const message = { id: row.id, type: row.event_type, timestamp: row.event_created_at ?? row.created_at, data, traceparent: row.event_traceparent };
    return attempt(hook.url, signedRequest(message, secrets));
  }

  /** Too much waits: it is dropped (kept in the log as failed), so enabling the webhook again starts afresh. */
  private async overflowed(hook: WebhookRow) {
    const reason = `more than ${MAX_PENDING_DELIVERIES} deliveries were waiting; they were dropped`;
    await this.env.DB.prepare("UPDATE outbox SET status = 'failed', last_error = ?2 WHERE target_kind = 'webhook' AND target_id = ?1 AND status = 'pending'")
      .bind(hook.id, reason)
      .run();
    return this.disable(hook, reason);
  }

  private async disable(hook: WebhookRow, reason: string) {
    await executeInRoom(this.env, hook.project_id, HUB_ACTOR, { op: "disable_webhook", webhookId: hook.id, reason });
    await this.ctx.storage.deleteAlarm();
  }
}
