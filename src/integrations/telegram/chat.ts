/**
 * One Durable Object per linked chat: sends the chat its notifications from
 * the outbox, in order (outbox-lane.ts), at most one a second (Telegram's
 * limit for a chat), waiting as long as Telegram says when it answers 429.
 */
import { Api, GrammyError } from "grammy";
import { MAX_PER_DRAIN, OutboxLane, PAGE, type AttemptRecord, type DueRow } from "../outbox-lane";
import { MAX_PENDING_DELIVERIES, nextAttemptAt } from "../retry-schedule";
import { apiRootOf } from "./api-root";
import { DENIED_EVENT, type DeniedSummary } from "./denied-calls";
import { notification, type NotificationContext } from "./messages";

/** Telegram takes about one message a second in a chat. */
const PACE_MS = 1000;
/** A server going offline is told once, though each of its projects records it. */
const SAME_SERVER_WINDOW_MS = 60_000;

interface Reads {
  projects: Map<string, string>;
  tasks: Map<string, { title: string; plan: unknown }>;
  options: Map<string, unknown>;
  /** Names of the sessions and rules that denied calls mention. */
  names: Map<string, string>;
}

const inList = (ids: string[]) => JSON.stringify([...new Set(ids)]);

/** What a row tells of: its event's data, or (for a row no event stands for) its own payload. */
const dataOf = (row: DueRow): Record<string, unknown> => JSON.parse(row.event_data ?? row.payload ?? "{}") ?? {};

interface LinkRow {
  chat_id: string;
  muted: number;
  unwatched: string;
  denied_projects: string;
  role: string;
  deactivated_at: string | null;
  member_of: string;
}

/** Why a recorded notification is no longer to be sent, if it is not. */
function staleness(row: DueRow, link: LinkRow): string | null {
  if (link.muted) return "not sent: the chat is muted";
  if (link.deactivated_at) return "not sent: the person's account is deactivated";
  if (row.event_type === DENIED_EVENT) {
    if (!(JSON.parse(link.denied_projects) as string[]).includes(row.project_id)) return "not sent: denied calls of the project are no longer asked for";
  } else if ((JSON.parse(link.unwatched) as string[]).includes(row.project_id)) return "not sent: the project is no longer watched";
  if (link.role !== "admin" && !(JSON.parse(link.member_of) as string[]).includes(row.project_id)) return "not sent: the person no longer sees the project";
  if (row.seq !== null && row.event_data === null) return "not sent: the event is gone";
  return null;
}

export class TelegramChat extends OutboxLane {
  protected readonly kind = "telegram";
  private lastSentAt = 0;
  private readonly offlineTold = new Map<string, number>();

  protected async drain() {
    for (let sent = 0; ;) {
      // The link and its person in the directory; the outbox on the shard this lane drains (the same database on `DB`).
      const [link, [pending, page]] = await Promise.all([
        this.directory
          .prepare(
            `SELECT l.chat_id, l.muted, l.unwatched, l.denied_projects, u.role, u.deactivated_at,
                    (SELECT json_group_array(m.project_id) FROM project_members m WHERE m.user_id = u.id) AS member_of
             FROM telegram_links l JOIN users u ON u.id = l.user_id WHERE l.id = ?1`,
          )
          .bind(this.targetId)
          .first<LinkRow>(),
        this.env.DB.batch([this.pendingCount(), this.due()]),
      ]);
      const due = page!.results as DueRow[];
      if (!link) {
        // Unlinked: what it was owed goes with it.
        await this.env.DB.prepare("DELETE FROM outbox WHERE target_kind = 'telegram' AND target_id = ?1 AND status = 'pending'").bind(this.targetId).run();
        return this.ctx.storage.deleteAlarm();
      }
      if (!this.env.TELEGRAM_BOT_TOKEN) return this.ctx.storage.deleteAlarm();
      if ((pending!.results as { n: number }[])[0]!.n > MAX_PENDING_DELIVERIES)
        return this.dropAll(`more than ${MAX_PENDING_DELIVERIES} messages were waiting: the chat was muted`);
      if (due.length === 0) return this.ctx.storage.deleteAlarm();
      const [reads, held] = await Promise.all([this.read(due), this.heldRows(due)]);
      for (const row of due) {
        if (held.has(row.id)) continue;
        const at = Date.parse(row.next_attempt_at);
        if (at > Date.now()) return this.ctx.storage.setAlarm(at);
        if (sent >= MAX_PER_DRAIN) return this.ctx.storage.setAlarm(Date.now());
        // Muting, unwatching or losing access after the row was recorded still counts.
        const stale = staleness(row, link);
        if (stale) {
          await this.record(row, { ok: false, statusCode: null, error: stale, durationMs: 0, responseBody: null });
          await this.giveUp(row);
          continue;
        }
        const result = await this.deliver(link.chat_id, row, reads);
        sent++;
        await this.record(row, result.record);
        if (result.record.ok) continue;
        if (result.retryAfterMs !== null) return this.retryAt(row, Date.now() + result.retryAfterMs);
        const status = result.record.statusCode;
        // The bot was blocked or the chat is gone: the link is over.
        if (status === 403 || (status === 400 && /chat not found/i.test(result.record.error ?? ""))) return this.unlink();
        // Telegram will not take this message as it is: trying again changes nothing.
        if (status === 400) {
          await this.giveUp(row);
          continue;
        }
        const next = nextAttemptAt(row.attempts + 1, Date.now());
        if (next !== null) return this.retryAt(row, next);
        // A chat that cannot be reached for a day loses that message, not the ones after it.
        await this.giveUp(row);
      }
      // A page with rows held back is looked at again in a while, not read again at once.
      if (held.size > 0 || due.length < PAGE) return this.idle();
    }
  }

  /** The link is over: it goes from the directory, and what it was owed here with it (other shards' lanes find it gone). */
  private async unlink() {
    await this.directory.prepare("DELETE FROM telegram_links WHERE id = ?1").bind(this.targetId).run();
    await this.env.DB.prepare("DELETE FROM outbox WHERE target_kind = 'telegram' AND target_id = ?1 AND status = 'pending'").bind(this.targetId).run();
    await this.ctx.storage.deleteAlarm();
  }

  private async dropAll(reason: string) {
    await this.directory.prepare("UPDATE telegram_links SET muted = 1 WHERE id = ?1").bind(this.targetId).run();
    await this.env.DB.prepare("UPDATE outbox SET status = 'failed', last_error = ?2 WHERE target_kind = 'telegram' AND target_id = ?1 AND status = 'pending'")
      .bind(this.targetId, reason)
      .run();
    await this.ctx.storage.deleteAlarm();
  }

  /** What the rows' messages mention: project names, task titles and plans, questions' options. */
  private async read(rows: DueRow[]): Promise<Reads> {
    const data = rows.map(dataOf);
    const denied = rows.flatMap((r, i) => (r.event_type === DENIED_EVENT ? ((data[i] as unknown as DeniedSummary).calls ?? []) : []));
    const taskIds = [...rows.flatMap((r) => (r.event_task_id ? [r.event_task_id] : [])), ...denied.flatMap((d) => (d.task_id ? [d.task_id] : []))];
    const interventionIds = data.flatMap((d) => (typeof d.intervention_id === "string" ? [d.intervention_id] : []));
    const sessionIds = denied.flatMap((d) => (d.session_id ? [d.session_id] : []));
    const ruleIds = denied.flatMap((d) => (d.matched_rule_id ? [d.matched_rule_id] : []));
    // The projects' rows on the shard this lane drains; the rules (the hub's, a server's or a project's) in the directory.
    const [[projects, tasks, options, sessions], rules] = await Promise.all([
      this.env.DB.batch([
        this.env.DB.prepare("SELECT id, name FROM projects WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(rows.map((r) => r.project_id))),
        this.env.DB.prepare("SELECT id, title, plan FROM tasks WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(taskIds)),
        this.env.DB.prepare("SELECT id, options FROM interventions WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(interventionIds)),
        this.env.DB.prepare("SELECT id, name FROM sessions WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(sessionIds)),
      ]),
      ruleIds.length > 0
        ? this.directory.prepare("SELECT id, name FROM approval_rules WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(ruleIds)).all()
        : { results: [] },
    ]);
    const names = [...(sessions!.results as { id: string; name: string | null }[]), ...(rules.results as { id: string; name: string | null }[])];
    return {
      projects: new Map((projects!.results as { id: string; name: string }[]).map((p) => [p.id, p.name])),
      tasks: new Map(
        (tasks!.results as { id: string; title: string; plan: string | null }[]).map((t) => [
          t.id,
          { title: t.title, plan: t.plan ? JSON.parse(t.plan) : null },
        ]),
      ),
      options: new Map((options!.results as { id: string; options: string | null }[]).map((o) => [o.id, o.options ? JSON.parse(o.options) : null])),
      names: new Map(names.map((n) => [n.id, n.name ?? n.id.slice(0, 8)])),
    };
  }

  private async deliver(chatId: string, row: DueRow, reads: Reads): Promise<{ record: AttemptRecord; retryAfterMs: number | null }> {
    const data = dataOf(row);
    const task = row.event_task_id ? reads.tasks.get(row.event_task_id) : undefined;
    const context: NotificationContext = {
      projectName: reads.projects.get(row.project_id) ?? "a project",
      taskTitle: task?.title ?? null,
      plan: task?.plan,
      options: typeof data.intervention_id === "string" ? reads.options.get(data.intervention_id) : undefined,
      names: reads.names,
      taskTitles: new Map([...reads.tasks].map(([id, t]) => [id, t.title])),
    };
    const message = notification({ type: row.event_type, task_id: row.event_task_id, data }, context);
    const skipped = { record: { ok: true, statusCode: null, error: null, durationMs: 0, responseBody: "not sent: nothing to say" }, retryAfterMs: null };
    if (!message) return skipped;
    if (row.event_type === "server_offline") {
      const server = String(data.server_id ?? "");
      if (Date.now() - (this.offlineTold.get(server) ?? 0) < SAME_SERVER_WINDOW_MS) return skipped;
      this.offlineTold.set(server, Date.now());
    }
    const wait = this.lastSentAt + PACE_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const api = new Api(this.env.TELEGRAM_BOT_TOKEN!, { apiRoot: apiRootOf(this.env) });
    const started = performance.now();
    try {
      this.lastSentAt = Date.now();
      await api.sendMessage(chatId, message.text, {
        parse_mode: "HTML",
        link_preview_options: { is_disabled: true },
        ...(message.buttons.length > 0 ? { reply_markup: { inline_keyboard: message.buttons } } : {}),
      });
      return {
        record: { ok: true, statusCode: 200, error: null, durationMs: Math.round(performance.now() - started), responseBody: null },
        retryAfterMs: null,
      };
    } catch (e) {
      const durationMs = Math.round(performance.now() - started);
      if (e instanceof GrammyError) {
        const retryAfter = e.error_code === 429 ? (e.parameters.retry_after ?? 1) * 1000 : null;
        return { record: { ok: false, statusCode: e.error_code, error: e.description, durationMs, responseBody: null }, retryAfterMs: retryAfter };
      }
      return { record: { ok: false, statusCode: null, error: e instanceof Error ? e.message : String(e), durationMs, responseBody: null }, retryAfterMs: null };
    }
  }
}
