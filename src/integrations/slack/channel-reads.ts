/**
 * What a Slack channel's lane reads to post a page of outbox rows: the channel's own rows (which projects post there,
 * muted or not, the events each picked), the names and tasks the messages mention, the messages it posted before (a
 * task's thread, what an event settles, what a task's end settles), and the event a message to settle was posted for.
 */
import type { DueRow } from "../outbox-lane";
import type { Env } from "../../runtime/env";
import { TASK_ENDING_EVENTS } from "../../domain/chat-events";
import { ASKING_KINDS, POSTED_FOR, SETTLED_BY } from "./notifications";

export interface ChannelRow {
  project_id: string;
  muted: number;
  events: string | null;
}

export interface Reads {
  projects: Map<string, string>;
  tasks: Map<string, { title: string; plan: unknown }>;
  options: Map<string, unknown>;
  /** The channel's posted messages by subject (their ts); kept up to date as the lane posts. */
  posts: Map<string, string>;
}

const inList = (ids: string[]) => JSON.stringify([...new Set(ids)]);

/** What a row tells of: its event's data, or (for a row no event stands for) its own payload. */
export const dataOf = (row: DueRow): Record<string, unknown> => JSON.parse(row.event_data ?? row.payload ?? "{}") ?? {};

/** The channel's rows for each project posting there, to read in a batch with others. */
export const channelRows = (env: Pick<Env, "DB">, teamId: string, channelId: string) =>
  env.DB.prepare("SELECT project_id, muted, events FROM slack_channels WHERE team_id = ?1 AND channel_id = ?2").bind(teamId, channelId);

/** Subjects a row's message may be threaded under or settle. */
function subjectsOf(row: DueRow, data: Record<string, unknown>): string[] {
  const task = row.event_task_id;
  const iv = typeof data.intervention_id === "string" ? [`iv:${data.intervention_id}`] : [];
  return task ? [`task:${task}`, `ap:${task}`, `plan:${task}`, `fail:${task}`, ...iv] : iv;
}

export async function readFor(env: Pick<Env, "DB">, teamId: string, channelId: string, rows: DueRow[]): Promise<Reads> {
  const data = rows.map(dataOf);
  const taskIds = rows.flatMap((r) => (r.event_task_id ? [r.event_task_id] : []));
  const interventionIds = data.flatMap((d) => (typeof d.intervention_id === "string" ? [d.intervention_id] : []));
  const [projects, tasks, options, posts] = await env.DB.batch([
    env.DB.prepare("SELECT id, name FROM projects WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(rows.map((r) => r.project_id))),
    env.DB.prepare("SELECT id, title, plan FROM tasks WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(taskIds)),
    env.DB.prepare("SELECT id, options FROM interventions WHERE id IN (SELECT value FROM json_each(?1))").bind(inList(interventionIds)),
    env.DB.prepare("SELECT subject, ts FROM slack_posts WHERE team_id = ?1 AND channel_id = ?2 AND subject IN (SELECT value FROM json_each(?3))").bind(
      teamId,
      channelId,
      inList(rows.flatMap((r, i) => subjectsOf(r, data[i]!))),
    ),
  ]);
  return {
    projects: new Map((projects!.results as { id: string; name: string }[]).map((p) => [p.id, p.name])),
    tasks: new Map(
      (tasks!.results as { id: string; title: string; plan: string | null }[]).map((t) => [t.id, { title: t.title, plan: t.plan ? JSON.parse(t.plan) : null }]),
    ),
    options: new Map((options!.results as { id: string; options: string | null }[]).map((o) => [o.id, o.options ? JSON.parse(o.options) : null])),
    posts: new Map((posts!.results as { subject: string; ts: string }[]).map((p) => [p.subject, p.ts])),
  };
}

const kindOf = (subject: string) => {
  const at = subject.indexOf(":");
  return [subject.slice(0, at), subject.slice(at + 1)] as [keyof typeof POSTED_FOR, string];
};

/**
 * The event that settled a message's subject after the row's event, if one did before the message was posted: it was
 * not owed to the channel then (nothing had been posted to settle), so the message is posted settled.
 */
export async function settledSince(env: Pick<Env, "DB">, row: DueRow, subject: string) {
  const [kind, id] = kindOf(subject);
  const types = SETTLED_BY[kind];
  if (!types || row.seq === null) return null;
  const found = await env.DB.prepare(
    `SELECT type, task_id, actor, data FROM events WHERE project_id = ?1 AND seq > ?2 AND type IN (SELECT value FROM json_each(?3))
       AND (?4 IS NULL OR task_id = ?4) AND (?5 IS NULL OR data ->> '$.intervention_id' = ?5)
     ORDER BY seq LIMIT 1`,
  )
    .bind(row.project_id, row.seq, JSON.stringify(types), kind === "iv" ? row.event_task_id : id, kind === "iv" ? id : null)
    .first<{ type: string; task_id: string | null; actor: string | null; data: string }>();
  return found ? { type: found.type, task_id: found.task_id, actor: found.actor, data: JSON.parse(found.data) as Record<string, unknown> } : null;
}

/**
 * The event a message to settle was posted for: the last of its kind before the settling one, about the same task or
 * question, unless something settled it since (its first settlement is the one it keeps). A task's end settles what
 * its messages still ask, so for those it counts as settling them too.
 */
export async function postedFor(env: Pick<Env, "DB">, row: DueRow, subject: string) {
  const [kind, id] = kindOf(subject);
  const type = POSTED_FOR[kind];
  if (!type) return null;
  const ending = (ASKING_KINDS as readonly string[]).includes(kind) ? TASK_ENDING_EVENTS : [];
  const found = await env.DB.prepare(
    `WITH posted AS (
       SELECT seq, task_id, data FROM events WHERE project_id = ?1 AND type = ?2 AND seq < ?3
         AND (?4 IS NULL OR task_id = ?4) AND (?5 IS NULL OR data ->> '$.intervention_id' = ?5)
       ORDER BY seq DESC LIMIT 1)
     SELECT task_id, data FROM posted p WHERE NOT EXISTS (
       SELECT 1 FROM events s WHERE s.project_id = ?1 AND s.seq > p.seq AND s.seq < ?3 AND (
         (s.type IN (SELECT value FROM json_each(?6)) AND (CASE WHEN ?5 IS NULL THEN s.task_id = p.task_id ELSE s.data ->> '$.intervention_id' = ?5 END))
         OR (s.type IN (SELECT value FROM json_each(?7)) AND s.task_id = p.task_id)))`,
  )
    .bind(
      row.project_id,
      type,
      row.seq ?? Number.MAX_SAFE_INTEGER,
      kind === "iv" ? row.event_task_id : id,
      kind === "iv" ? id : null,
      JSON.stringify(SETTLED_BY[kind]),
      JSON.stringify(ending),
    )
    .first<{ task_id: string | null; data: string }>();
  return found ? { type, task_id: found.task_id, data: JSON.parse(found.data) as Record<string, unknown> } : null;
}

/** A task's messages in the channel that may still ask something: its approval, its plan, and its questions. */
export async function taskAsks(env: Pick<Env, "DB">, teamId: string, channelId: string, taskId: string) {
  // From the task's questions (by their index), not from the channel's every question ever posted.
  const { results } = await env.DB.prepare(
    `SELECT p.subject, p.ts FROM slack_posts p
       WHERE p.team_id = ?1 AND p.channel_id = ?2
         AND p.subject IN (SELECT 'iv:' || i.id FROM interventions i WHERE i.task_id = ?3 UNION ALL SELECT 'ap:' || ?3 UNION ALL SELECT 'plan:' || ?3)
     ORDER BY p.created_at`,
  )
    .bind(teamId, channelId, taskId)
    .all<{ subject: string; ts: string }>();
  return results;
}

export interface PostedAt {
  teamId: string;
  channelId: string;
  projectId: string;
}

/**
 * Records a posted message under a subject. A task's thread keeps its first message (`task:`); a later message of
 * another subject takes the earlier one's place (a plan submitted again is the one to settle).
 */
export const postRecord = (env: Pick<Env, "DB">, at: PostedAt, subject: string, ts: string, threadTs: string | null) =>
  env.DB.prepare(
    `INSERT INTO slack_posts (team_id, channel_id, subject, project_id, ts, thread_ts, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
     ON CONFLICT (team_id, channel_id, subject) DO UPDATE SET ts = excluded.ts, thread_ts = excluded.thread_ts, created_at = excluded.created_at
     WHERE excluded.subject NOT LIKE 'task:%'`,
  ).bind(at.teamId, at.channelId, subject, at.projectId, ts, threadTs, new Date().toISOString());
