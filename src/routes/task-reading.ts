/**
 * Reading tasks: an agent's assigned tasks, pages of tasks, one task (by the
 * hub's id or a task-format client's), its input envelope and its timeline.
 * Reads go straight to D1.
 */
import { uuid } from "../http/fields";
import { z } from "zod";
import { projectFor, scopesOverlap, visibleProjectIds } from "../auth/access";
import { currentServer } from "../middleware/guards";
import { taskView1 } from "../views/task-queries";
import { listTasksOnShards, sessionOnShards } from "../views/shard-lists";
import { envelopeOf, envelopeOfView } from "../views/task-envelope";
import { FINISHED, TASK_STATUSES, type TaskStatus } from "../domain/lifecycle";
import { STATUS_ALIASES } from "../protocol/task-format";
import { readQuery } from "../http/body";
import type { HubContext } from "../http/context";
import { notFound, Problem } from "../http/problem";
import { eventSchema } from "../views/events";
import { taskFormatPageSchema, taskFormatResponseSchema, taskFormatView } from "../views/task-format";
import { inputEnvelopeSchema, taskPageSchema, taskSchema } from "../views/tasks";
import { taskByClientId } from "./client-task-ids";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";
import { archiveDb, archivedView, liveOrArchived } from "./archived-tasks";
import { archivedTaskEntry, archivedTaskView, taskTimeline } from "../archive/reads";

const STATUS_NAMES = Object.keys(STATUS_ALIASES) as [string, ...string[]];

/** `?format=task-format` answers tasks in the task-format response shape; without it, the hub's own. */
const format = z.enum(["task-format"], { error: "must be task-format (or left out for the hub's own shape)" }).optional();
const getQuery = z.looseObject({
  format,
  project_id: uuid.optional().meta({ description: "Only a task of this project (to choose among tasks of several projects with the same client id)" }),
});

const listQuery = z.object({
  project_id: z.uuid("must be a UUID").optional(),
  // The hub's statuses, and the task-format names for them (in_progress, completed, input_required).
  status: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum([...TASK_STATUSES, ...STATUS_NAMES], { error: `must be one of ${[...TASK_STATUSES, ...STATUS_NAMES].join(", ")}` })))
    .transform((names) => [...new Set(names.flatMap((n) => STATUS_ALIASES[n] ?? [n as TaskStatus]))])
    .optional()
    .meta({ description: `Comma-separated statuses: ${[...TASK_STATUSES, ...STATUS_NAMES].join(", ")}` }),
  limit: z.coerce.number().int().min(1, "must be at least 1").max(200, "must be at most 200").default(50),
  cursor: z.string().max(500).optional().meta({ description: "A page's `next_cursor`" }),
  /** Only these tasks: a live view reads the tasks its events named in one request. */
  ids: z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(uuid).min(1, "name at least one task").max(200, "at most 200 tasks"))
    .optional()
    .meta({ description: "Comma-separated task ids (up to 200): only these tasks" }),
  format,
});

async function listVisibleTasks(c: HubContext, q: z.output<typeof listQuery>) {
  const projectIds = q.project_id ? [(await projectFor(c, q.project_id)).id] : await visibleProjectIds(c);
  const page = await listTasksOnShards(c.env, c.var.db, { projectIds, ids: q.ids, statuses: q.status, limit: q.limit, cursor: q.cursor });
  return { tasks: page.tasks, count: page.tasks.length, next_cursor: page.next_cursor };
}

/** A task by the hub's id, else by a task-format client's own id among the caller's projects (only in `projectId`, when given). */
async function taskByEitherId(c: HubContext, ref: string, projectId?: string) {
  try {
    const task = await taskFor(c, ref);
    if (!projectId || task.projectId === projectId) return task;
  } catch (e) {
    if (!(e instanceof Problem && e.status === 404)) throw e;
  }
  return taskByClientId(c, ref, projectId);
}

export const UNFINISHED = TASK_STATUSES.filter((s) => !FINISHED.includes(s));

const checkQuery = z.object({ session_id: uuid.optional() });

/** Tasks assigned to the calling agent's session (or, without session_id, its server) that are not finished. */
async function checkAssigned(c: HubContext) {
  const server = currentServer(c);
  const { session_id } = readQuery(c, checkQuery);
  if (session_id) {
    const session = await sessionOnShards(c.env, c.var.db, session_id);
    if (!session || !scopesOverlap(server.projectIds ?? null, [session.projectId])) throw notFound("Session");
  }
  const page = await listTasksOnShards(c.env, c.var.db, {
    projectIds: server.projectIds ?? null,
    statuses: UNFINISHED,
    ...(session_id ? { forSession: session_id } : { assignedServerId: server.id }),
    limit: 200,
  });
  return { count: page.tasks.length, tasks: page.tasks };
}

/** The most events a task's timeline shows: a task has a handful, a runaway one shows its first thousand. */
const TIMELINE_LIMIT = 1000;

const taskFormatOrTask = "With `?format=task-format`, the task-format response (seeds/task-format.md §Task Response) instead of the hub's task object.";

const assignedTasks = z.object({ count: z.int(), tasks: z.array(taskSchema) });
const timeline = z.object({ events: z.array(eventSchema).meta({ description: `In seq order; at most the first ${TIMELINE_LIMIT}` }) });

/** GET /check (agents): the unfinished tasks assigned to the caller. */
export function checkAssignedRoute({ r, describe, read }: TaskSurface) {
  r.get(
    "/check",
    describe({
      id: "checkAssignedTasks",
      summary: "Check assigned tasks",
      description:
        "The unfinished tasks assigned to the calling agent's session, or to its server.\n\n" +
        "With `session_id`: the tasks in that session's project assigned to it, or to its server without naming a session. " +
        "Without: the tasks assigned to the server. At most 200, newest first.",
      query: checkQuery,
      responses: { 200: assignedTasks },
    }),
    read,
    async (c) => c.json(await checkAssigned(c)),
  );
}

/** GET / : a page of tasks. */
export function listRoute({ r, describe, read }: TaskSurface) {
  r.get(
    "/",
    describe({
      id: "listTasks",
      summary: "List tasks",
      description: "Tasks the caller can see, newest first, a page at a time.\n\n" + taskFormatOrTask.replace("response", "response for each task"),
      query: listQuery,
      responses: { 200: z.union([taskPageSchema, taskFormatPageSchema]) },
    }),
    read,
    async (c) => {
      const q = readQuery(c, listQuery);
      const page = await listVisibleTasks(c, q);
      return c.json(q.format === "task-format" ? { ...page, tasks: page.tasks.map(taskFormatView) } : page);
    },
  );
}

/** GET /:id : one task. */
export function getRoute({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id",
    describe({
      id: "getTask",
      summary: "Get a task",
      description:
        "A task, by the hub's id or by a task-format request's own `id` (`client_id`) among the caller's projects.\n\n" +
        "The hub's id wins. A client id that tasks of several of the caller's projects have is 409 `AMBIGUOUS_TASK_ID` unless `project_id` " +
        "chooses one. " +
        taskFormatOrTask,
      query: getQuery,
      responses: { 200: z.union([taskSchema, taskFormatResponseSchema]) },
    }),
    read,
    async (c) => {
      const { format, project_id } = readQuery(c, getQuery);
      // First the task: it names the shard the rest is read on (c.var.db is read after it).
      const found = await liveOrArchived(c, taskId(c), async () => {
        const { id } = await taskByEitherId(c, taskId(c), project_id);
        return taskView1(c.var.db, id);
      });
      const view = "live" in found ? found.live : await archivedView(c, found.archived);
      if (project_id && view.project_id !== project_id) throw notFound("Task");
      return c.json(format === "task-format" ? taskFormatView(view) : view);
    },
  );
}

/** GET /:id/envelope : the task's input envelope. */
export function envelopeRoute({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id/envelope",
    describe({
      id: "getTaskEnvelope",
      summary: "Get the input envelope",
      description:
        "The task's input envelope (seeds/agent-envelope.md).\n\n" +
        "Built from the task: what to do (`task.action` is its type), the paths it names, and `prior_context` from finished upstreams' envelope notes, resolved inputs and the task's notes.",
      responses: { 200: inputEnvelopeSchema },
    }),
    read,
    async (c) => {
      const found = await liveOrArchived(c, taskId(c), () => taskFor(c, taskId(c)));
      if ("live" in found) return c.json(await envelopeOf(c.var.db, found.live.id));
      // An archived task's upstreams left D1 with it or after it: any gone are read from the archive too.
      const upstreamResult = async (id: string) => {
        const entry = await archivedTaskEntry(c.env, id);
        return entry && entry.project_id === found.archived.project_id ? (await archivedTaskView(c.env.BLOBS, entry)).result : undefined;
      };
      return c.json(await envelopeOfView(c.var.db, await archivedView(c, found.archived), upstreamResult));
    },
  );
}

/** GET /:id/events : the task's timeline. */
export function timelineRoute({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id/events",
    describe({
      id: "listTaskEvents",
      summary: "List a task's events",
      description: "The task's own events in seq order: its timeline (an archived task's from its archive).",
      responses: { 200: timeline },
    }),
    read,
    async (c) => {
      const found = await liveOrArchived(c, taskId(c), () => taskFor(c, taskId(c)));
      const task = "live" in found ? found.live : { id: found.archived.task_id, projectId: found.archived.project_id };
      return c.json({ events: await taskTimeline(await archiveDb(c, task.projectId), c.env.BLOBS, task.projectId, task.id, TIMELINE_LIMIT) });
    },
  );
}
