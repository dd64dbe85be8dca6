/** A project's runs (API.md "Templates, schedules and triggers"): each firing of a template, newest first, with its outcome. */
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { runs } from "../db/schema";
import { and, eq } from "drizzle-orm";
import { readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { uuid } from "../http/fields";
import { notFound } from "../http/problem";
import { person } from "../middleware/guards";
import { runSchema, runViews } from "../views/automation";
import { automationOperation } from "./templates";

export const runRoutes = new Hono<HubEnv>();

const runsQuery = z.object({
  template_id: uuid.optional(),
  schedule_id: uuid.optional(),
  trigger_id: uuid.optional(),
  before: uuid.optional().meta({ description: "A run's id: only runs started before it (the next page)" }),
  limit: z.coerce.number("must be a number").int("must be a whole number").min(1, "must be at least 1").max(200, "must be at most 200").default(50),
});

runRoutes.get(
  "/:id/runs",
  automationOperation({
    id: "listRuns",
    summary: "The project's runs, newest first",
    description:
      "Each firing of a template (by hand, a schedule's slot, a trigger's call, Telegram's `/run`): its parameters, the tasks it made and " +
      "its status, read from those tasks. A slot or call that made nothing is a run too, `skipped` with why. Filter by template, schedule " +
      "or trigger; page with `before` (the last run's id).",
    query: runsQuery,
    responses: { 200: z.object({ runs: z.array(runSchema) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const q = readQuery(c, runsQuery);
    let before: { startedAt: string; id: string } | undefined;
    if (q.before) {
      const row = await c.var.db.query.runs.findFirst({
        where: and(eq(runs.id, q.before), eq(runs.projectId, project.id)),
        columns: { id: true, startedAt: true },
      });
      if (!row) throw notFound("Run");
      before = row;
    }
    const list = await runViews(c.var.db, project.id, {
      templateId: q.template_id,
      scheduleId: q.schedule_id,
      triggerId: q.trigger_id,
      before,
      limit: q.limit,
    });
    return c.json({ runs: list });
  },
);
