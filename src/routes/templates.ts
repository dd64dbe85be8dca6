/**
 * A project's templates (API.md "Templates, schedules and triggers"): saved task graphs with parameters, instantiated
 * in one call as one batch by the project's room. Members and admins write them; anyone who sees the project reads them.
 */
import { and, asc, eq, getTableColumns, inArray, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { schedules, taskDependencies, tasks, templates, triggers } from "../db/schema";
import { connectedTasks } from "../db/task-graph";
import { isUniqueViolation } from "../db/errors";
import { draftTemplate } from "../domain/template-draft";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid, uuid } from "../http/fields";
import { conflict, notFound } from "../http/problem";
import { person } from "../middleware/guards";
import { documented, type Operation } from "../openapi/operation";
import { instantiateBody, templateBody } from "../protocol/templates";
import { roomActor, runInRoom } from "../room/client";
import { taskViews } from "../views/task-queries";
import { taskSchema } from "../views/tasks";
import { templateSchema, templateTaskView, templateView } from "../views/automation";
import { offerGraph } from "../room/run-offers";

export const templateRoutes = new Hono<HubEnv>();

export const automationOperation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Automation", caller: "person" });

const RULES =
  "A template is a task graph saved with parameters: `tasks` name each other by `key` in `dependencies` (`blocks`, `input` with a " +
  "`contract_key`, `related`), and `{{name}}` in any string field (title, spec, acceptance criteria, requirements) is filled in from " +
  "`parameters` (each `string`, `number` or `boolean`, `required` or with a `default`). A requirements string that is one placeholder and " +
  "nothing else takes the parameter's value as it is (a number stays a number). Checked as saved: keys once each, dependencies on keys of " +
  "the template and in no cycle, placeholders naming declared parameters.";

async function templateOf(c: HubContext, projectId: string) {
  const id = c.req.param("tid")!;
  if (!isUuid(id)) throw notFound("Template");
  const row = await c.var.db.query.templates.findFirst({ where: and(eq(templates.id, id), eq(templates.projectId, projectId)) });
  if (!row) throw notFound("Template");
  return row;
}

const nameTaken = (name: string) => conflict(`A template named "${name}" exists in the project`, "TEMPLATE_NAME_TAKEN");

templateRoutes.post(
  "/:id/templates",
  automationOperation({
    id: "createTemplate",
    summary: "Save a template",
    description: `Members of the project and admins. Names are unique in a project (409 \`TEMPLATE_NAME_TAKEN\`).\n\n${RULES}`,
    body: templateBody,
    responses: { 201: templateSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const body = await readJson(c, templateBody);
    const now = new Date().toISOString();
    const row = {
      id: crypto.randomUUID(),
      projectId: project.id,
      name: body.name,
      description: body.description ?? null,
      parameters: body.parameters,
      tasks: body.tasks,
      createdBy: roomActor(c).label,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await c.var.db.insert(templates).values(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(body.name);
      throw e;
    }
    return c.json(templateView(row), 201);
  },
);

templateRoutes.get(
  "/:id/templates",
  automationOperation({
    id: "listTemplates",
    summary: "The project's templates, by name",
    responses: { 200: z.object({ templates: z.array(templateSchema) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const rows = await c.var.db.select().from(templates).where(eq(templates.projectId, project.id)).orderBy(asc(templates.name));
    return c.json({ templates: rows.map(templateView) });
  },
);

const draftQuery = z.object({ task_id: uuid.meta({ description: "A task of the project: its graph (what it depends on and what depends on it) is drafted" }) });

templateRoutes.get(
  "/:id/templates/draft",
  automationOperation({
    id: "draftTemplate",
    summary: "Draft a template from a task's graph",
    description:
      "The tasks of the graph `task_id` belongs to (every task connected to it by dependencies, whichever way; at most 100), " +
      "as a template's `tasks` keyed by their titles, with their dependencies by key. Nothing is saved: edit it (replace specifics with " +
      "`{{parameters}}`) and save it with `POST .../templates`.",
    query: draftQuery,
    responses: { 200: z.object({ tasks: z.array(templateTaskView) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const { task_id } = readQuery(c, draftQuery);
    const { db } = c.var;
    const graph = await db
      .select({ ...getTableColumns(tasks), order: sql<number>`${tasks}.rowid` })
      .from(tasks)
      .where(and(eq(tasks.projectId, project.id), sql`${tasks.id} IN (${connectedTasks(sql`${task_id}`, 101)})`))
      .limit(101);
    if (!graph.some((t) => t.id === task_id)) throw notFound("Task");
    if (graph.length > 100) throw conflict("The task's graph holds more than 100 tasks: a template holds at most 100");
    const deps = await db
      .select()
      .from(taskDependencies)
      .where(
        inArray(
          taskDependencies.taskId,
          graph.map((t) => t.id),
        ),
      );
    return c.json({ tasks: draftTemplate(graph, deps) });
  },
);

templateRoutes.get(
  "/:id/templates/:tid",
  automationOperation({ id: "getTemplate", summary: "A template of the project", responses: { 200: templateSchema } }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    return c.json(templateView(await templateOf(c, project.id)));
  },
);

templateRoutes.put(
  "/:id/templates/:tid",
  automationOperation({
    id: "replaceTemplate",
    summary: "Replace a template",
    description: `Members of the project and admins. The whole template is replaced; schedules and triggers using it fire the new one from now on.\n\n${RULES}`,
    body: templateBody,
    responses: { 200: templateSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const before = await templateOf(c, project.id);
    const body = await readJson(c, templateBody);
    const changes = {
      name: body.name,
      description: body.description ?? null,
      parameters: body.parameters,
      tasks: body.tasks,
      updatedAt: new Date().toISOString(),
    };
    try {
      await c.var.db.update(templates).set(changes).where(eq(templates.id, before.id));
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(body.name);
      throw e;
    }
    return c.json(templateView({ ...before, ...changes }));
  },
);

templateRoutes.delete(
  "/:id/templates/:tid",
  automationOperation({
    id: "deleteTemplate",
    summary: "Delete a template",
    description:
      "Members of the project and admins. A template a schedule or trigger uses is 409 `TEMPLATE_IN_USE` (delete or repoint those first). " +
      "Its runs stay, with its name.",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const template = await templateOf(c, project.id);
    const { db } = c.var;
    const [usedBySchedule, usedByTrigger] = await Promise.all([
      db.select({ id: schedules.id }).from(schedules).where(eq(schedules.templateId, template.id)).limit(1),
      db.select({ id: triggers.id }).from(triggers).where(eq(triggers.templateId, template.id)).limit(1),
    ]);
    if (usedBySchedule.length || usedByTrigger.length)
      throw conflict(`A ${usedBySchedule.length ? "schedule" : "trigger"} uses the template: delete it first`, "TEMPLATE_IN_USE");
    await db.delete(templates).where(eq(templates.id, template.id));
    return c.body(null, 204);
  },
);

templateRoutes.post(
  "/:id/templates/:tid/instantiate",
  automationOperation({
    id: "instantiateTemplate",
    summary: "Make a template's graph now",
    description:
      "Members of the project and admins. The parameters are checked against the template's (a missing required one, one of another type " +
      "or one it does not declare is 422 naming `parameters.<name>`), filled in, and every task is checked as a create would check it " +
      "(422 naming `tasks.<index>.<field>`). Then the whole graph is made in one batch, all of it or none: its tasks are `pending` " +
      "(blocked where they wait on another), with the run that records it (`source: manual`); tasks with requirements are offered to " +
      "servers at once.",
    body: instantiateBody,
    responses: { 201: z.object({ run_id: z.string(), tasks: z.array(taskSchema) }) },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const template = await templateOf(c, project.id);
    const body = await readJson(c, instantiateBody);
    const result = await runInRoom(c, project.id, { op: "instantiate", templateId: template.id, parameters: body.parameters, run: { source: "manual" } });
    const taskIds = result.data!.task_ids as string[];
    await offerGraph(c.env, project.id, template);
    return c.json({ run_id: String(result.data!.run_id), tasks: await taskViews(c.var.db, taskIds) }, 201);
  },
);
