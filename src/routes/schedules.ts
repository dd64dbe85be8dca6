/**
 * A project's schedules (API.md "Templates, schedules and triggers"): a template fired on the slots of a cron expression
 * in a time zone, by the project's room and its alarm. Members and admins set them up; anyone who sees the project
 * reads them. Every write goes through the room, the only writer of schedules, which keeps when each is next due.
 */
import { and, asc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { schedules } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { notFound } from "../http/problem";
import { person } from "../middleware/guards";
import { changeScheduleBody, createScheduleBody } from "../protocol/schedules";
import type { ScheduleFields } from "../room/commands";
import { runInRoom } from "../room/client";
import { scheduleSchema, scheduleView } from "../views/automation";
import { automationOperation } from "./templates";

export const scheduleRoutes = new Hono<HubEnv>();

const RULES =
  "A schedule fires its template at each slot of `cron` (five fields, minute to weekday, or a nickname such as `@daily`) read in " +
  "`timezone` (IANA, `UTC` by default; daylight saving is followed), with `parameters`. Checked as saved: the expression and the time " +
  "zone (422 naming `cron` or `timezone`), the template (a template of the project, 422 naming `template_id`) and the parameters against " +
  "the template's (a schedule whose every firing would be refused is refused now, 422 naming `parameters.<name>`). Each slot is handled " +
  "once, whatever restarts or wake-ups happen, and makes a run (`GET .../runs?schedule_id=`): the template's graph, or a run `skipped` " +
  "with why. A slot the room wakes for more than five minutes late is `missed`: `skip` records it skipped, `run_once` fires the latest " +
  "such slot once. While the previous firing's graph has a task not finished, `overlap: skip` records the slot skipped and `allow` " +
  "fires anyway. A paused schedule fires nothing; resuming it starts from the next slot after now (slots passed while paused never " +
  "run). `next_runs` are the next five slots (none while paused). Tasks with requirements are offered to servers as they are made.";

async function scheduleOf(c: HubContext, projectId: string) {
  const id = c.req.param("sid")!;
  if (!isUuid(id)) throw notFound("Schedule");
  const row = await c.var.db.query.schedules.findFirst({ where: and(eq(schedules.id, id), eq(schedules.projectId, projectId)) });
  if (!row) throw notFound("Schedule");
  return row;
}

scheduleRoutes.post(
  "/:id/schedules",
  automationOperation({
    id: "createSchedule",
    summary: "Set up a schedule",
    description: `Members of the project and admins; viewers get 403.\n\n${RULES}`,
    body: createScheduleBody,
    responses: { 201: scheduleSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const body = await readJson(c, createScheduleBody);
    const schedule: ScheduleFields = {
      templateId: body.template_id,
      name: body.name ?? null,
      cron: body.cron,
      timezone: body.timezone,
      parameters: body.parameters,
      missed: body.missed,
      overlap: body.overlap,
      paused: body.paused,
    };
    const result = await runInRoom(c, project.id, { op: "create_schedule", schedule });
    const row = await c.var.db.query.schedules.findFirst({ where: eq(schedules.id, String(result.data!.schedule_id)) });
    return c.json(scheduleView(row!), 201);
  },
);

scheduleRoutes.get(
  "/:id/schedules",
  automationOperation({
    id: "listSchedules",
    summary: "The project's schedules, oldest first",
    description: "Anyone who sees the project. Each with its next five slots (`next_runs`, none while paused) and the last slot handled.",
    responses: { 200: z.object({ schedules: z.array(scheduleSchema) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const rows = await c.var.db.select().from(schedules).where(eq(schedules.projectId, project.id)).orderBy(asc(schedules.createdAt), asc(schedules.id));
    const now = new Date();
    return c.json({ schedules: rows.map((r) => scheduleView(r, now)) });
  },
);

scheduleRoutes.get(
  "/:id/schedules/:sid",
  automationOperation({ id: "getSchedule", summary: "A schedule of the project", responses: { 200: scheduleSchema } }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    return c.json(scheduleView(await scheduleOf(c, project.id)));
  },
);

scheduleRoutes.patch(
  "/:id/schedules/:sid",
  automationOperation({
    id: "updateSchedule",
    summary: "Change, pause or resume a schedule",
    description:
      "Members of the project and admins. Fields left out stay; `paused: true` pauses it, `paused: false` resumes it. The schedule as it " +
      "becomes is checked as a new one is: its cron and time zone always, its template and parameters when they change and as it resumes " +
      "(a template changed since never stops a pause or a rename). A new `cron` or `timezone`, or resuming, starts its slots again from now; any other " +
      `change keeps the slot it waits for.\n\n${RULES}`,
    body: changeScheduleBody,
    responses: { 200: scheduleSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const before = await scheduleOf(c, project.id);
    const body = await readJson(c, changeScheduleBody);
    const changes: Partial<ScheduleFields> = {
      ...(body.template_id !== undefined ? { templateId: body.template_id } : {}),
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.cron !== undefined ? { cron: body.cron } : {}),
      ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
      ...(body.parameters !== undefined ? { parameters: body.parameters } : {}),
      ...(body.missed !== undefined ? { missed: body.missed } : {}),
      ...(body.overlap !== undefined ? { overlap: body.overlap } : {}),
      ...(body.paused !== undefined ? { paused: body.paused } : {}),
    };
    await runInRoom(c, project.id, { op: "change_schedule", scheduleId: before.id, changes });
    return c.json(scheduleView(await scheduleOf(c, project.id)));
  },
);

scheduleRoutes.delete(
  "/:id/schedules/:sid",
  automationOperation({
    id: "deleteSchedule",
    summary: "Delete a schedule",
    description: "Members of the project and admins. It fires no more; its runs stay (listed by `schedule_id` as before).",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const before = await scheduleOf(c, project.id);
    await runInRoom(c, project.id, { op: "delete_schedule", scheduleId: before.id });
    return c.body(null, 204);
  },
);
