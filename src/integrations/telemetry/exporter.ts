/**
 * One Durable Object per project exporting telemetry (named by the project's
 * id): sends each finished task's span to the project's collector, in the
 * order the tasks finished, with the webhooks' retry rules (outbox-lane.ts,
 * retry-schedule.ts). A span is built when it is sent, from D1 as the task is
 * then; a task retried since is sent when it finishes again, once. A failing
 * delivery holds the ones behind it and is tried again on the schedule (later
 * where the collector asks for it with `Retry-After`); a 400 (the collector
 * will never take that span) loses that span only; when the tries run out,
 * the export is disabled until it is saved again, which sends what waited.
 */
import { unseal } from "../../auth/sealed";
import { FINISHED, type TaskStatus } from "../../domain/lifecycle";
import { HUB_VERSION } from "../../runtime/version";
import { MAX_PER_DRAIN, OutboxLane, PAGE, type AttemptRecord, type DueRow } from "../outbox-lane";
import { MAX_PENDING_DELIVERIES, nextAttemptAt, RETRY_DELAYS_MS } from "../retry-schedule";
import { attempt } from "../webhook-message";
import { exportRequest, tracesUrl } from "./otlp-request";
import { readTaskForSpan } from "./span-reads";
import { taskSpan } from "./task-span";

interface ExportRow {
  project_id: string;
  project_name: string;
  endpoint: string;
  headers: string | null;
  include_content: number;
  disabled_reason: string | null;
}

/** An attempt at a delivery; `skipped`: it is owed nothing now (logged as an attempt, never tried again). */
type Outcome = AttemptRecord & { retryAfterMs?: number | null; skipped?: boolean };

const notSent = (error: string): Outcome => ({ ok: false, statusCode: null, error: `not sent: ${error}`, durationMs: 0, responseBody: null });
const skipped = (error: string): Outcome => ({ ...notSent(error), skipped: true });

export class TelemetryExporter extends OutboxLane {
  protected readonly kind = "telemetry";

  protected async drain() {
    for (let sent = 0; ;) {
      const [exports, pending, page] = await this.env.DB.batch([
        this.env.DB.prepare(
          `SELECT x.project_id, p.name AS project_name, x.endpoint, x.headers, x.include_content, x.disabled_reason
           FROM telemetry_exports x JOIN projects p ON p.id = x.project_id WHERE x.project_id = ?1`,
        ).bind(this.targetId),
        this.pendingCount(),
        this.due(),
      ]);
      const target = (exports!.results as ExportRow[])[0];
      const due = page!.results as DueRow[];
      if (!target) {
        // The export was stopped: what it was owed goes with it.
        await this.env.DB.prepare("DELETE FROM outbox WHERE target_kind = 'telemetry' AND target_id = ?1 AND status = 'pending'").bind(this.targetId).run();
        return this.ctx.storage.deleteAlarm();
      }
      if (target.disabled_reason) return this.ctx.storage.deleteAlarm();
      if ((pending!.results as { n: number }[])[0]!.n > MAX_PENDING_DELIVERIES) return this.overflowed();
      if (due.length === 0) return this.ctx.storage.deleteAlarm();
      const headers = target.headers ? (JSON.parse(await unseal(this.env.DATA_KEY, target.headers)) as Record<string, string>) : {};
      for (const row of due) {
        const at = Date.parse(row.next_attempt_at);
        if (at > Date.now()) return this.ctx.storage.setAlarm(at);
        if (sent++ >= MAX_PER_DRAIN) return this.ctx.storage.setAlarm(Date.now());
        const result = await this.deliver(target, row, headers);
        await this.record(row, result);
        if (result.ok) continue;
        // Owed nothing now, or refused for good (OTLP's 400 is not to be retried): that span only is lost.
        if (result.skipped || result.statusCode === 400) {
          await this.giveUp(row);
          continue;
        }
        const next = nextAttemptAt(row.attempts + 1, Date.now());
        if (next !== null) return this.retryAt(row, Math.max(next, Date.now() + (result.retryAfterMs ?? 0)));
        await this.giveUp(row);
        return this.disable(`a span's delivery failed ${RETRY_DELAYS_MS.length} times over about a day (last: ${result.error})`);
      }
      if (due.length < PAGE) return this.ctx.storage.deleteAlarm();
    }
  }

  /** One attempt at sending the span a row is owed, built now from what D1 holds of its task. */
  private async deliver(target: ExportRow, row: DueRow, headers: Record<string, string>): Promise<Outcome> {
    if (!row.event_task_id) return skipped("the task is gone");
    const reads = await readTaskForSpan(this.env.DB, target.project_id, row.event_task_id);
    if (!reads) return skipped("the task is gone");
    if (!FINISHED.includes(reads.task.status as TaskStatus)) return skipped("the task was retried; its span goes when it finishes again");
    if (reads.lastEndingSeq !== null && row.seq !== null && reads.lastEndingSeq > row.seq)
      return skipped("the task finished again since; its span goes with that");
    const url = tracesUrl(target.endpoint);
    // Checked when saved, and again here (a name's addresses change), as webhooks' targets are.
    const check = await this.checkTarget(url);
    if (!check.ok) return notSent(`the endpoint failed its check (${check.message})`);
    const span = await taskSpan(
      {
        ...reads,
        project: { id: target.project_id, name: target.project_name },
        includeContent: target.include_content === 1,
        hubVersion: HUB_VERSION,
      },
      reads.cancelReason,
    );
    return attempt(url, exportRequest([span], headers));
  }

  /** Too much waits: it is dropped (kept in the log as failed), and the export disabled until saved again. */
  private async overflowed() {
    const reason = `more than ${MAX_PENDING_DELIVERIES} spans were waiting; they were dropped`;
    await this.env.DB.prepare("UPDATE outbox SET status = 'failed', last_error = ?2 WHERE target_kind = 'telemetry' AND target_id = ?1 AND status = 'pending'")
      .bind(this.targetId, reason)
      .run();
    return this.disable(reason);
  }

  private async disable(reason: string) {
    await this.env.DB.prepare("UPDATE telemetry_exports SET disabled_reason = ?2, updated_at = ?3 WHERE project_id = ?1")
      .bind(this.targetId, reason, new Date().toISOString())
      .run();
    await this.ctx.storage.deleteAlarm();
  }
}
