/**
 * The overviews' reads: sums over the roll-ups counted at write (task_rollup, migrations 0032 and 0038; usage_daily,
 * migration 0029) and lookups by index, never a scan of a project's tasks or events.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { awaitingPerson, DURATION_COLUMNS } from "../db/schema";
import { ONLINE_WINDOW_MS } from "../domain/presence";
import { daysUpTo, medianSeconds, rateOf } from "../domain/task-rollup";

export const OPEN_STATUSES = ["pending", "assigned", "planning", "plan_review", "running", "needs_human"] as const;
export type OpenCounts = Record<(typeof OPEN_STATUSES)[number], number>;

const noneOpen = (): OpenCounts => Object.fromEntries(OPEN_STATUSES.map((s) => [s, 0])) as OpenCounts;
const inList = (column: string, ids: readonly string[]) => sql`${sql.raw(column)} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
const byProject = <R extends { project_id: string }>(rows: R[]) => new Map(rows.map((r) => [r.project_id, r]));

/** Each project's unfinished tasks by status. */
async function openCounts(db: Db, ids: readonly string[]): Promise<Map<string, OpenCounts>> {
  const rows = await db.all<OpenCounts & { project_id: string }>(
    sql`SELECT project_id, ${sql.raw(OPEN_STATUSES.map((s) => `sum(${s}) AS ${s}`).join(", "))} FROM task_rollup WHERE ${inList("project_id", ids)} GROUP BY project_id`,
  );
  return new Map(rows.map((r) => [r.project_id, Object.fromEntries(OPEN_STATUSES.map((s) => [s, Number(r[s])])) as OpenCounts]));
}

/** Questions waiting on people per project: open interventions, plans to review and agents' tasks to approve (as the inbox counts them). */
async function questionCounts(db: Db, ids: readonly string[]) {
  const rows = await db.all<{ project_id: string; n: number }>(
    sql`SELECT project_id, count(*) AS n FROM (
          SELECT i.project_id FROM interventions i WHERE ${inList("i.project_id", ids)} AND i.status = 'pending' AND i.target_session_id IS NULL
          UNION ALL
          SELECT t.project_id FROM tasks t WHERE ${inList("t.project_id", ids)} AND ${sql.raw(awaitingPerson("t"))}
        ) GROUP BY project_id`,
  );
  return byProject(rows);
}

/** The servers online (a heartbeat within the window) with an open session in each project, and their running tasks there. */
async function agentsOnline(db: Db, ids: readonly string[], now: number) {
  const since = new Date(now - ONLINE_WINDOW_MS).toISOString();
  return db.all<{ project_id: string; server_id: string; server_name: string; sessions: number; running: number }>(
    sql`SELECT s.project_id, v.id AS server_id, v.name AS server_name, count(*) AS sessions,
          (SELECT count(*) FROM tasks t WHERE t.assigned_server_id = v.id AND t.completed_at IS NULL AND t.project_id = s.project_id AND t.status = 'running') AS running
        FROM sessions s JOIN servers v ON v.id = s.server_id
        WHERE ${inList("s.project_id", ids)} AND s.status IN ('starting', 'running') AND v.last_heartbeat >= ${since}
        GROUP BY s.project_id, v.id ORDER BY v.name`,
  );
}

/** Per project, what failed and what was spent on day `day`. */
async function today(db: Db, ids: readonly string[], day: string) {
  const [failed, spent] = await Promise.all([
    db.all<{ project_id: string; n: number }>(
      sql`SELECT project_id, sum(failed) AS n FROM task_rollup WHERE ${inList("project_id", ids)} AND day = ${day} GROUP BY project_id`,
    ),
    db.all<{ project_id: string; usd: number }>(
      sql`SELECT project_id, sum(cost_usd) AS usd FROM usage_daily WHERE ${inList("project_id", ids)} AND day = ${day} GROUP BY project_id`,
    ),
  ]);
  return { failed: byProject(failed), spent: byProject(spent) };
}

const cents = (usd: number) => Math.round(usd * 1_000_000) / 1_000_000;

/** Each project's state at a glance, in the order of `ids`. */
export async function projectsAtAGlance(db: Db, ids: readonly string[], now = Date.now()) {
  if (ids.length === 0) return [];
  const day = new Date(now).toISOString().slice(0, 10);
  const [open, questions, agents, sums] = await Promise.all([openCounts(db, ids), questionCounts(db, ids), agentsOnline(db, ids, now), today(db, ids, day)]);
  return ids.map((id) => {
    const counts = open.get(id) ?? noneOpen();
    return {
      project_id: id,
      open_tasks: Object.values(counts).reduce((a, b) => a + b, 0),
      open_by_status: counts,
      questions_waiting: Number(questions.get(id)?.n ?? 0),
      agents_online: agents.filter((a) => a.project_id === id).length,
      failures_today: Number(sums.failed.get(id)?.n ?? 0),
      spend_today_usd: cents(Number(sums.spent.get(id)?.usd ?? 0)),
    };
  });
}

/** One project over its last `days` UTC days (today the last): per day, per type, rates and who is at work. */
export async function projectOverview(db: Db, projectId: string, days: number, now = Date.now()) {
  const dayList = daysUpTo(new Date(now).toISOString().slice(0, 10), days);
  const from = dayList[0]!;
  const [glance] = await projectsAtAGlance(db, [projectId], now);
  const [perDay, spend, agents] = await Promise.all([
    db.all<{ day: string; task_type: string; done: number; failed: number; retried: number; cancelled: number } & Record<string, number>>(
      sql`SELECT day, task_type, done, failed, retried, cancelled, ${sql.raw(DURATION_COLUMNS.join(", "))} FROM task_rollup WHERE project_id = ${projectId} AND day >= ${from}`,
    ),
    db.all<{ day: string; usd: number }>(
      sql`SELECT day, sum(cost_usd) AS usd FROM usage_daily WHERE project_id = ${projectId} AND day >= ${from} GROUP BY day`,
    ),
    agentsOnline(db, [projectId], now),
  ]);
  const daily = new Map(dayList.map((d) => [d, { day: d, done: 0, failed: 0, retried: 0, cancelled: 0, spend_usd: 0 }]));
  const types = new Map<string, { done: number; failed: number; histogram: Map<number, number> }>();
  for (const r of perDay) {
    const d = daily.get(r.day);
    if (d) for (const k of ["done", "failed", "retried", "cancelled"] as const) d[k] += Number(r[k]);
    // A row that only moved open counts (tasks created or started that day) says nothing of a type's outcomes.
    if (Number(r.done) + Number(r.failed) + Number(r.retried) + Number(r.cancelled) === 0) continue;
    const t = types.get(r.task_type) ?? { done: 0, failed: 0, histogram: new Map() };
    t.done += Number(r.done);
    t.failed += Number(r.failed);
    DURATION_COLUMNS.forEach((c, b) => t.histogram.set(b, (t.histogram.get(b) ?? 0) + Number(r[c])));
    types.set(r.task_type, t);
  }
  for (const r of spend) {
    const d = daily.get(r.day);
    if (d) d.spend_usd = cents(Number(r.usd));
  }
  const rows = [...daily.values()];
  const sum = (k: "done" | "failed" | "retried" | "cancelled") => rows.reduce((n, r) => n + r[k], 0);
  const totals = { done: sum("done"), failed: sum("failed"), retried: sum("retried"), cancelled: sum("cancelled") };
  return {
    days: rows,
    totals,
    failure_rate: rateOf(totals.failed, totals.done + totals.failed),
    retry_rate: rateOf(totals.retried, totals.done + totals.failed),
    by_type: [...types.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([type, t]) => ({ type, done: t.done, failed: t.failed, median_seconds_to_done: medianSeconds(t.histogram) })),
    open_by_status: glance!.open_by_status,
    open_tasks: glance!.open_tasks,
    questions_waiting: glance!.questions_waiting,
    agents: agents.map((a) => ({ server_id: a.server_id, server_name: a.server_name, sessions: Number(a.sessions), running_tasks: Number(a.running) })),
  };
}
