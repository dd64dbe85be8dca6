/**
 * One Durable Object per Slack channel a project posts to (named `team:channel`): posts the channel's notifications
 * from the outbox in order (outbox-lane.ts), at most one call a second (Slack's limit for posting in a channel),
 * waiting as long as Slack says when it answers 429. A task's messages go in one thread, under the first posted about
 * it; a message that asks for something is updated in place by the event that settles it, whoever acted and where,
 * or by its task's end. Slack's own failures (a 5xx, or `internal_error` and the like answered with 200) are tried again.
 * What a post leaves (its `ts` under its subject, slack_posts) is written in the same batch as the row's record: a
 * restart between a post and its record posts it again, which is better than losing it.
 */
import { unseal } from "../../auth/sealed";
import { CHAT_EVENTS, SETTLING_EVENTS, TASK_ENDING_EVENTS } from "../../domain/chat-events";
import { MAX_PER_DRAIN, OutboxLane, PAGE, type AttemptRecord, type DueRow } from "../outbox-lane";
import { MAX_PENDING_DELIVERIES, nextAttemptAt } from "../retry-schedule";
import { CHANNEL_GONE, slackClient, slackFailure, TOKEN_GONE, TRANSIENT } from "./api";
import { channelRows, dataOf, postedFor, postRecord, readFor, settledSince, taskAsks, type ChannelRow, type PostedAt, type Reads } from "./channel-reads";
import { forgetInstallation, sealedTokenOf } from "./installations";
import { notification, settled, settledSubject, settlement, type SlackContext, type SlackMessage } from "./notifications";

/** Slack takes about one message a second in a channel. */
const PACE_MS = 1000;
/** A server going offline is told once, though each of its projects records it. */
const SAME_SERVER_WINDOW_MS = 60_000;

const SETTLING: ReadonlySet<string> = new Set(SETTLING_EVENTS);
const TOLD: ReadonlySet<string> = new Set(CHAT_EVENTS);
const ENDING: ReadonlySet<string> = new Set(TASK_ENDING_EVENTS);

/** What one attempt came to: its record, how long Slack asked to wait, Slack's error, and what to keep of it. */
interface Outcome {
  record: AttemptRecord;
  retryAfterMs: number | null;
  error: string | null;
  keep: D1PreparedStatement[];
  called: boolean;
}

const done = (responseBody: string | null, called = false, keep: D1PreparedStatement[] = [], durationMs = 0): Outcome => ({
  record: { ok: true, statusCode: called ? 200 : null, error: null, durationMs, responseBody },
  retryAfterMs: null,
  error: null,
  keep,
  called,
});

/** Whether the channel asks to be posted this kind of event. */
const picks = (channel: ChannelRow, type: string) => TOLD.has(type) && (channel.events === null || (JSON.parse(channel.events) as string[]).includes(type));

/** Why a recorded notification is no longer to be posted, if it is not. */
function staleness(row: DueRow, channel: ChannelRow | undefined): string | null {
  if (!channel) return "not sent: the project no longer posts to this channel";
  if (channel.muted) return "not sent: the channel is muted";
  if (row.seq !== null && row.event_data === null) return "not sent: the event is gone";
  // A task's end not asked for still settles what the task's messages ask.
  if (TOLD.has(row.event_type) && !ENDING.has(row.event_type) && !picks(channel, row.event_type))
    return `not sent: the channel no longer asks for ${row.event_type}`;
  return null;
}

/** Slack refused this one call for good (the message cannot be updated, say): not worth trying again, and no reason to stop the lane. */
const refusedForGood = (o: Outcome) =>
  !o.record.ok &&
  o.record.statusCode === 200 &&
  o.retryAfterMs === null &&
  !(o.error && (TRANSIENT.has(o.error) || TOKEN_GONE.has(o.error) || CHANNEL_GONE.has(o.error)));

export class SlackChannel extends OutboxLane {
  protected readonly kind = "slack";
  private lastSentAt = 0;
  private readonly offlineTold = new Map<string, number>();

  private get teamId() {
    return this.targetId.slice(0, this.targetId.indexOf(":"));
  }

  private get channelId() {
    return this.targetId.slice(this.targetId.indexOf(":") + 1);
  }

  private hubUrl: string | null = null;

  protected async drain() {
    for (let sent = 0; ;) {
      // The workspace and the channel's projects in the directory; the outbox on the shard this lane drains.
      const directory = { DB: this.directory };
      const [[installation, channels], [pending, page]] = await Promise.all([
        this.directory.batch([sealedTokenOf(directory, this.teamId), channelRows(directory, this.teamId, this.channelId)]),
        this.env.DB.batch([this.pendingCount(), this.due()]),
      ]);
      const installed = (installation!.results as { bot_token_sealed: string; hub_url: string | null }[])[0];
      const sealed = installed?.bot_token_sealed;
      // Links to tasks: the configured address, else the one the workspace's installer reached the hub at; none without either.
      this.hubUrl = (this.env.PUBLIC_URL || installed?.hub_url || "").replace(/\/$/, "") || null;
      const due = page!.results as DueRow[];
      if (due.length === 0) return this.ctx.storage.deleteAlarm();
      if (!sealed) return this.dropAll("not sent: the workspace is not installed");
      if ((pending!.results as { n: number }[])[0]!.n > MAX_PENDING_DELIVERIES)
        return this.dropAll(`not sent: more than ${MAX_PENDING_DELIVERIES} messages were waiting: the channel was muted`, true);
      const token = await unseal(this.env.DATA_KEY, sealed);
      const byProject = new Map((channels!.results as ChannelRow[]).map((c) => [c.project_id, c]));
      const [reads, held] = await Promise.all([readFor(this.env, this.teamId, this.channelId, due), this.heldRows(due)]);
      for (const row of due) {
        if (held.has(row.id)) continue;
        const at = Date.parse(row.next_attempt_at);
        if (at > Date.now()) return this.ctx.storage.setAlarm(at);
        if (sent >= MAX_PER_DRAIN) return this.ctx.storage.setAlarm(Date.now());
        // Removing or muting the channel, or changing what it asks for, after the row was recorded still counts.
        const channel = byProject.get(row.project_id);
        const stale = staleness(row, channel);
        if (stale) {
          await this.record(row, { ok: false, statusCode: null, error: stale, durationMs: 0, responseBody: null });
          await this.giveUp(row);
          continue;
        }
        const outcome = await this.deliver(token, row, reads, picks(channel!, row.event_type));
        if (outcome.called) sent++;
        await this.record(row, outcome.record, outcome.keep);
        if (outcome.record.ok) continue;
        if (outcome.retryAfterMs !== null) return this.retryAt(row, Date.now() + outcome.retryAfterMs);
        if (outcome.error && TOKEN_GONE.has(outcome.error)) {
          // The workspace's token no longer works: the installation is over, and what its channels were owed with it.
          await forgetInstallation({ DB: this.directory }, this.teamId);
          return this.dropAll("not sent: the workspace was uninstalled or its token revoked");
        }
        if (outcome.error && CHANNEL_GONE.has(outcome.error)) {
          await this.giveUp(row);
          return this.dropAll(`not sent: ${outcome.error}`);
        }
        // Slack answered and will not take this message as it is: trying again changes nothing. (Slack's own failures,
        // also answered with 200, go on to the retry schedule.)
        if (refusedForGood(outcome)) {
          await this.giveUp(row);
          continue;
        }
        const next = nextAttemptAt(row.attempts + 1, Date.now());
        if (next !== null) return this.retryAt(row, next);
        // A channel that cannot be reached for a day loses that message, not the ones after it.
        await this.giveUp(row);
      }
      // A page with rows held back is looked at again in a while, not read again at once.
      if (held.size > 0 || due.length < PAGE) return this.idle();
    }
  }

  /** Gives up every message the channel waits for, saying why (and mutes the channel, if asked). */
  private async dropAll(reason: string, mute = false) {
    if (mute)
      await this.directory.prepare("UPDATE slack_channels SET muted = 1 WHERE team_id = ?1 AND channel_id = ?2").bind(this.teamId, this.channelId).run();
    await this.env.DB.prepare("UPDATE outbox SET status = 'failed', last_error = ?2 WHERE target_kind = 'slack' AND target_id = ?1 AND status = 'pending'")
      .bind(this.targetId, reason)
      .run();
    await this.ctx.storage.deleteAlarm();
  }

  private contextOf(projectId: string, taskId: string | null, interventionId: unknown, reads: Reads): SlackContext {
    const task = taskId ? reads.tasks.get(taskId) : undefined;
    return {
      projectName: reads.projects.get(projectId) ?? "a project",
      taskTitle: task?.title ?? null,
      taskUrl: taskId && task && this.hubUrl ? `${this.hubUrl}/projects/${projectId}/tasks/${taskId}` : null,
      plan: task?.plan,
      options: typeof interventionId === "string" ? reads.options.get(interventionId) : undefined,
    };
  }

  private async deliver(token: string, row: DueRow, reads: Reads, picked: boolean): Promise<Outcome> {
    const data = dataOf(row);
    const event = { type: row.event_type, task_id: row.event_task_id, data };
    if (SETTLING.has(row.event_type) || ENDING.has(row.event_type)) {
      // Updates first: done again after a failed post, they leave the same words.
      const settledOutcome = await this.settle(token, row, event, reads);
      if (!picked || (!settledOutcome.record.ok && !refusedForGood(settledOutcome))) return settledOutcome;
    }
    const fresh = notification(event, this.contextOf(row.project_id, row.event_task_id, data.intervention_id, reads));
    if (!fresh) return done("not sent: nothing to say");
    const since = fresh.subject ? await settledSince(this.env, row, fresh.subject) : null;
    const message = since ? settled(fresh, settlement(since, since.actor)) : fresh;
    if (row.event_type === "server_offline") {
      const server = String(data.server_id ?? "");
      if (Date.now() - (this.offlineTold.get(server) ?? 0) < SAME_SERVER_WINDOW_MS) return done("not sent: told already");
      this.offlineTold.set(server, Date.now());
    }
    const root = row.event_task_id ? reads.posts.get(`task:${row.event_task_id}`) : undefined;
    return this.call(
      token,
      (api) =>
        api.chat.postMessage({
          channel: this.channelId,
          text: message.text,
          blocks: message.blocks,
          unfurl_links: false,
          ...(root ? { thread_ts: root, ...(message.subject ? { reply_broadcast: false } : {}) } : {}),
        }),
      {
        reads,
        at: { teamId: this.teamId, channelId: this.channelId, projectId: row.project_id },
        // The first message about a task is its thread's root; one that asks for something is kept under its subject.
        subjects: [...(row.event_task_id && !root ? [`task:${row.event_task_id}`] : []), ...(message.subject ? [message.subject] : [])],
        threadTs: root ?? null,
      },
    );
  }

  /**
   * Updates the messages an event settles (a task's end: all the task's messages still asking): their words again,
   * without buttons, saying who settled them and how. One settled before keeps its first settlement.
   */
  private async settle(token: string, row: DueRow, event: { type: string; task_id: string | null; data: Record<string, unknown> }, reads: Reads) {
    const own = settledSubject(event);
    const targets = own && reads.posts.has(own) ? [{ subject: own, ts: reads.posts.get(own)! }] : [];
    if (ENDING.has(event.type) && event.task_id) targets.push(...(await taskAsks(this.env, this.teamId, this.channelId, event.task_id)));
    let last = done("not sent: nothing to update");
    for (const { subject, ts } of targets) {
      const original = await postedFor(this.env, row, subject);
      const message: SlackMessage | null = original
        ? notification(original, this.contextOf(row.project_id, original.task_id, original.data.intervention_id, reads))
        : null;
      if (!message) continue;
      const after = settled(message, settlement(event, row.event_actor));
      const outcome = await this.call(token, (api) => api.chat.update({ channel: this.channelId, ts, text: after.text, blocks: after.blocks }));
      // One message Slack will not update does not hold the others.
      if (!outcome.record.ok && !refusedForGood(outcome)) return outcome;
      last = outcome;
    }
    return last;
  }

  /** One call to Slack, paced; for a post, what to keep of it: its ts under its subjects, in the record's batch. */
  private async call(
    token: string,
    send: (api: ReturnType<typeof slackClient>) => Promise<{ ts?: string }>,
    keep?: { reads: Reads; at: PostedAt; subjects: string[]; threadTs: string | null },
  ): Promise<Outcome> {
    const wait = this.lastSentAt + PACE_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const started = performance.now();
    this.lastSentAt = Date.now();
    try {
      const answer = await send(slackClient(this.env, token));
      const durationMs = Math.round(performance.now() - started);
      const ts = answer.ts;
      if (!keep || !ts) return done(null, true, [], durationMs);
      for (const subject of keep.subjects) keep.reads.posts.set(subject, ts);
      // The root itself is in no thread.
      const kept = keep.subjects.map((subject) => postRecord(this.env, keep.at, subject, ts, subject.startsWith("task:") ? null : keep.threadTs));
      return done(null, true, kept, durationMs);
    } catch (e) {
      const failure = slackFailure(e);
      return {
        record: { ok: false, statusCode: failure.status, error: failure.error, durationMs: Math.round(performance.now() - started), responseBody: null },
        retryAfterMs: failure.retryAfterMs,
        error: failure.error,
        keep: [],
        called: true,
      };
    }
  }
}
