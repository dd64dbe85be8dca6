/**
 * The overviews (API.md "Overview"): every visible project's state at a glance, and one project's last days. Both read
 * roll-ups counted at write (src/overview/reads.ts) and a few rows by index, so they stay cheap as a project grows.
 */
import { DIRECTORY, onEachShard, shardDb } from "../db/shards";
import { desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor, visibleProjectIds } from "../auth/access";
import { codeHealthSnapshots, events, projects } from "../db/schema";
import { inJsonList } from "../db/sql";
import { readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { OPEN_STATUSES, projectOverview, projectsAtAGlance } from "../overview/reads";
import { budgetSchema, budgetViews } from "../views/budgets";
import { eventSchema, eventView } from "../views/events";
import { id } from "../views/fields";

/** Events in a project's recent activity. */
const RECENT_EVENTS = 15;
const MAX_DAYS = 90;

const count = z.int().min(0);
const openByStatus = z.object(Object.fromEntries(OPEN_STATUSES.map((s) => [s, count])) as Record<(typeof OPEN_STATUSES)[number], typeof count>);
const glance = {
  open_tasks: count.meta({ description: "Tasks not yet done, failed or cancelled" }),
  open_by_status: openByStatus,
  questions_waiting: count.meta({ description: "Open questions, plans to review and agents' tasks to approve: what waits on people" }),
  agents_online: count.meta({ description: "Servers online with an open session in the project" }),
  failures_today: count.meta({ description: "Tasks that failed today (UTC)" }),
  spend_today_usd: z.number().meta({ description: "What the project's agents cost today (UTC)" }),
};

const projectGlanceSchema = z
  .object({ project_id: id, name: z.string(), slug: z.string(), ...glance })
  .meta({ id: "ProjectAtAGlance", description: "A project's state now" });

const overviewQuery = z.object({
  days: z.coerce
    .number()
    .int("must be a whole number of days")
    .min(1, "must be at least 1")
    .max(MAX_DAYS, `must be at most ${MAX_DAYS}`)
    .default(14)
    .meta({ description: `How many UTC days to answer, today the last (1..${MAX_DAYS})` }),
});

const daySchema = z.object({
  day: z.string().meta({ description: "A UTC day, `YYYY-MM-DD`" }),
  done: count,
  failed: count,
  retried: count.meta({ description: "Failed tasks sent back to pending, and tasks handed back by their agent" }),
  cancelled: count,
  spend_usd: z.number(),
});

const projectOverviewSchema = z
  .object({
    project_id: id,
    days: z.array(daySchema).meta({ description: "One per day, oldest first, today last" }),
    totals: z.object({ done: count, failed: count, retried: count, cancelled: count }),
    failure_rate: z.number().meta({ description: "Failed over finished (done and failed) in the period, 0..1" }),
    retry_rate: z.number().meta({ description: "Retries over finished (done and failed) in the period" }),
    by_type: z.array(
      z.object({
        type: z.string(),
        done: count,
        failed: count,
        median_seconds_to_done: z
          .int()
          .nullable()
          .meta({ description: "From creation to done, read from a log-scale histogram (each bucket twice the one before): within its bucket" }),
      }),
    ),
    open_tasks: glance.open_tasks,
    open_by_status: openByStatus,
    questions_waiting: glance.questions_waiting,
    agents: z
      .array(z.object({ server_id: id, server_name: z.string(), sessions: count, running_tasks: count }))
      .meta({ description: "Servers online with an open session in the project, and the project's tasks running on each" }),
    code_health: z
      .object({ health_score: z.int(), health_grade: z.string(), received_at: z.string() })
      .nullable()
      .meta({ description: "The latest snapshot's score; null before the first" }),
    budgets: z.array(budgetSchema),
    recent_events: z.array(eventSchema).meta({ description: `The project's latest ${RECENT_EVENTS} events, newest first` }),
  })
  .meta({ id: "ProjectOverview" });

export const overviewRoutes = new Hono<HubEnv>();

overviewRoutes.get(
  "/overview",
  documented({
    id: "listProjectOverviews",
    tag: "Projects",
    summary: "Every project at a glance",
    description:
      "For each project the caller can see (as `GET /projects`, newest first): its unfinished tasks by status, questions waiting on people, " +
      "servers online in it, and today's (UTC) failures and spend. Read from roll-ups counted as tasks change.",
    caller: "person",
    responses: { 200: z.object({ projects: z.array(projectGlanceSchema) }) },
  }),
  person(),
  async (c) => {
    const visible = await visibleProjectIds(c);
    const rows =
      visible !== null && visible.length === 0
        ? []
        : await c.var.db
            .select({ id: projects.id, name: projects.name, slug: projects.slug, shard: projects.shard })
            .from(projects)
            .where(visible === null ? undefined : inJsonList(projects.id, visible))
            .orderBy(desc(projects.createdAt));
    // Each shard the projects live on is read at once (the directory's in the request's session).
    const byShard = new Map<string, string[]>();
    for (const r of rows) byShard.set(r.shard, [...(byShard.get(r.shard) ?? []), r.id]);
    const pages = await onEachShard(c.env, byShard, (db, ids, shard) => projectsAtAGlance(shard === DIRECTORY ? c.var.db : db, ids));
    const glances = new Map(pages.flat().map((g) => [g.project_id, g]));
    return c.json({ projects: rows.map((r) => ({ ...glances.get(r.id)!, name: r.name, slug: r.slug })) });
  },
);

overviewRoutes.get(
  "/:id/overview",
  documented({
    id: "getProjectOverview",
    tag: "Projects",
    summary: "A project's overview",
    description:
      "The project's last `days` UTC days: tasks done, failed, retried and cancelled and spend per day, the median time to done by task type, " +
      "failure and retry rates; and now: unfinished tasks, questions waiting, servers online and their load, the latest code-health score, " +
      "budgets and the latest events.",
    caller: "person",
    query: overviewQuery,
    responses: { 200: projectOverviewSchema },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id")!);
    const { days } = readQuery(c, overviewQuery);
    const db = project.shard === DIRECTORY ? c.var.db : shardDb(c.env, project.shard);
    const [overview, health, budgets, recent] = await Promise.all([
      projectOverview(db, project.id, days),
      db.query.codeHealthSnapshots.findFirst({
        where: eq(codeHealthSnapshots.projectId, project.id),
        orderBy: desc(codeHealthSnapshots.receivedAt),
        columns: { healthScore: true, healthGrade: true, receivedAt: true },
      }),
      budgetViews(db, project.id),
      db.select().from(events).where(eq(events.projectId, project.id)).orderBy(desc(events.seq)).limit(RECENT_EVENTS),
    ]);
    return c.json({
      project_id: project.id,
      ...overview,
      code_health: health ? { health_score: health.healthScore, health_grade: health.healthGrade, received_at: health.receivedAt } : null,
      budgets,
      recent_events: recent.map(eventView),
    });
  },
);
