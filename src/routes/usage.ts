/**
 * What the agents used (API.md "Usage, budgets and telemetry"): a project's totals broken down by day, model, agent or
 * task, and one task's with its graph's. Sums of the roll-ups the project's room keeps (src/usage/reads.ts).
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { fieldError } from "../http/problem";
import { person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { projectUsage, TASK_ROWS, taskUsage, USAGE_GROUPS } from "../usage/reads";
import { usageAmountsSchema } from "../views/usage";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";

/** The longest period one request sums (about 13 months of days). */
const MAX_DAYS = 400;
const DAY_MS = 86_400_000;

const day = (what: string) =>
  z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/, "must be a date (YYYY-MM-DD) or a UTC date-time")
    .refine((v) => !Number.isNaN(Date.parse(v)), "must be a real date")
    .transform((v) => v.slice(0, 10))
    .optional()
    .meta({ description: `${what}, a UTC day (inclusive); a date-time counts as its day` });

const usageQuery = z.object({
  from: day("The first day; 30 days before `to` by default"),
  to: day("The last day; today by default"),
  group_by: z.enum(USAGE_GROUPS, { error: `must be one of ${USAGE_GROUPS.join(", ")}` }).default("day"),
});

const rowSchema = usageAmountsSchema.extend({
  day: z.string().optional(),
  model: z.string().nullable().optional(),
  server_id: z.string().nullable().optional(),
  server_name: z.string().nullable().optional(),
  agent_type: z.string().nullable().optional(),
  task_id: z.string().optional(),
  title: z.string().optional(),
  status: z.string().optional(),
});

const projectUsageSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    group_by: z.enum(USAGE_GROUPS),
    totals: usageAmountsSchema,
    rows: z.array(rowSchema).meta({ description: `One per day, model, agent (server and agent type) or task (the ${TASK_ROWS} costliest)` }),
  })
  .meta({ id: "ProjectUsage" });

const taskUsageSchema = z
  .object({
    totals: usageAmountsSchema,
    graph: z.object({
      task_ids: z.array(z.string()).meta({ description: "The task, what it depends on and what depends on it, transitively" }),
      totals: usageAmountsSchema,
    }),
  })
  .meta({ id: "TaskUsage" });

export const usageRoutes = new Hono<HubEnv>();

usageRoutes.get(
  "/:id/usage",
  documented({
    id: "getProjectUsage",
    tag: "Usage and budgets",
    summary: "The project's usage",
    description:
      "What the project's agents used from `from` to `to` (UTC days, inclusive; at most 400 days), in all and per `group_by`: `day`, `model`, " +
      "`agent` (server and agent type) or `task`. Usage with no task (a session working on none) is in the totals and the day, model and agent rows.",
    caller: "person",
    query: usageQuery,
    responses: { 200: projectUsageSchema },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id")!);
    const q = readQuery(c, usageQuery);
    const to = q.to ?? new Date().toISOString().slice(0, 10);
    const from = q.from ?? new Date(Date.parse(to) - 30 * DAY_MS).toISOString().slice(0, 10);
    if (from > to) throw fieldError("from", "must not be after `to`");
    if ((Date.parse(to) - Date.parse(from)) / DAY_MS > MAX_DAYS) throw fieldError("from", `must be at most ${MAX_DAYS} days before \`to\``);
    return c.json({ from, to, group_by: q.group_by, ...(await projectUsage(c.var.db, project.id, from, to, q.group_by)) });
  },
);

/** GET /:id/usage on a task surface: the task's usage and its graph's. */
export function taskUsageRoute({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id/usage",
    describe({
      id: "getTaskUsage",
      summary: "A task's usage and its graph's",
      description: "What the agents used on the task, and on its graph: the task, everything it depends on and everything that depends on it.",
      responses: { 200: taskUsageSchema },
    }),
    read,
    async (c) => {
      // First the task: it names the shard the rest is read on.
      const { id } = await taskFor(c, taskId(c));
      return c.json(await taskUsage(c.var.db, id));
    },
  );
}
