/**
 * Tasks, on both surfaces with the same shapes: people at /api/v1/tasks (JWT),
 * agents at /api/v1/server/tasks (API key). Reads go straight to D1; every
 * write goes through the project's room, whose lifecycle table decides who
 * may do what.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import { Hono } from "hono";
import { isUuid, uuid } from "../http/fields";
import { z } from "zod";
import { checkAccess, membershipOf, principalOf, projectFor, scopesOverlap, visibleProjectIds, type Access } from "../auth/access";
import { agent, currentServer, person, roomAgent } from "../auth/middleware";
import { dependenciesOf, listTasks, notesOf, taskView1 } from "../db/task-queries";
import { envelopeOf } from "../db/task-envelope";
import { events, OPEN_SESSION_STATUSES, servers, sessions, tasks } from "../db/schema";
import { FINISHED, TASK_STATUSES, type TaskStatus } from "../domain/lifecycle";
import { failRequest, failureOf, isTaskFormatRequest, newTaskOf, requestForHash, STATUS_ALIASES, taskFormatRequest, traceIdOf } from "../protocol/task-format";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";
import { sha256Hex } from "../auth/secrets";
import { parseWith, readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, fieldError, notFound, Problem, validationFailed } from "../http/problem";
import { assignBody, cancelBody, checkTaskProtocol, createTaskBody, helpBody, noteBody, planBody, reviseBody, updateTaskBody } from "../protocol/hub-api";
import { newTask, type AssignTarget, type TaskChanges } from "../room/commands";
import { roomActor, runInRoom, runInRoomForView } from "../room/client";
import { OFFLOAD_DEPTH } from "../offload";
import { pointedTo } from "../dataref-pointers";
import { discardOffloaded, offloaderFor } from "../http/request-offloads";
import { eventSchema, eventView } from "../views/events";
import { taskFormatPageSchema, taskFormatResponseSchema, taskFormatView } from "../views/task-format";
import { id } from "../views/fields";
import {
  dependencySchema as taskDependencySchema,
  dependencyView,
  inputEnvelopeSchema,
  noteSchema,
  noteView,
  taskPageSchema,
  taskSchema,
  type NoteRow,
  type TaskView,
} from "../views/tasks";
import { documented, type Operation } from "../openapi/operation";
import { rankServers } from "../domain/matching";
import { dependencySchema, type Requirements } from "../protocol/orchestratia-v1";
import { serverCandidates } from "../db/server-candidates";
import { rememberedProjectOf, rememberProjectOf } from "../db/task-projects";
import { rejectBody } from "../protocol/compute-protocol";
import { taskByClientId } from "./client-task-ids";
import { completeBody } from "../protocol/task-response";
import { completionCommand } from "./task-completion";
import { parentTask, subtaskTrace } from "./subtasks";

/** Large JSON the caller sends for this project goes to R2 (see offload.ts). */
const offloadFor = (c: HubContext, projectId: string) => offloaderFor(c, projectId, roomActor(c).label);

/**
 * The task, if the caller can see its project (404 otherwise, like a missing
 * one). One query; none for an agent's write to a task whose project this
 * isolate already knows, or whose server serves a single project: the room
 * then reads the task itself, and answers 404 if it is not in its project.
 */
export async function taskFor(c: HubContext, taskId: string, access: Access = "read") {
  if (!isUuid(taskId)) throw notFound("Task");
  const p = principalOf(c);
  const known = access === "write" && p.kind === "server" ? (rememberedProjectOf(taskId) ?? onlyProjectOf(p.server.projectIds ?? null)) : undefined;
  if (known) {
    checkAccess(c, known, false, access, "Task");
    noteTask(c, taskId, known);
    return { id: taskId, projectId: known };
  }
  const [task] = await c.var.db
    .select({ id: tasks.id, projectId: tasks.projectId, member: membershipOf(p, tasks.projectId) })
    .from(tasks)
    .where(eq(tasks.id, taskId));
  if (!task) throw notFound("Task");
  rememberProjectOf(task.id, task.projectId);
  checkAccess(c, task.projectId, task.member !== null, access, "Task");
  noteTask(c, task.id, task.projectId);
  return task;
}

/** The one project a scope names, if it names exactly one. */
const onlyProjectOf = (scope: readonly string[] | null) => (scope?.length === 1 ? scope[0] : undefined);

/** The task (and its project) this request is about, for its log line. */
function noteTask(c: HubContext, taskId: string, projectId: string) {
  c.set("logTask", taskId);
  c.set("logProject", projectId);
}

function protocolWarnings(body: { structured_spec?: Record<string, unknown> | null; requirements?: Record<string, unknown> | null }) {
  const check = checkTaskProtocol(body);
  if (!check.ok) throw validationFailed(check.errors);
  return check.warnings;
}

/** The project a new task goes in: `project_id`, or the project of the creating session. */
async function projectOfNewTask(c: HubContext, body: { project_id?: string; session_id?: string | null }) {
  let sessionProject: string | undefined;
  if (body.session_id) {
    const session = await c.var.db.query.sessions.findFirst({ where: eq(sessions.id, body.session_id) });
    // A session in another project than project_id cannot be where the task comes from.
    const usable = session && (!body.project_id || session.projectId === body.project_id);
    if (!usable) throw fieldError("session_id", "no such session in the project");
    sessionProject = session.projectId;
  }
  const projectId = body.project_id ?? sessionProject;
  if (!projectId) throw fieldError("project_id", "is required (or send session_id of a session in the project)");
  try {
    return await projectFor(c, projectId, "write");
  } catch (e) {
    if (e instanceof Problem && e.status === 404) throw fieldError(body.project_id ? "project_id" : "session_id", "no such project");
    throw e;
  }
}

/** The request's W3C trace context, kept on the task; a malformed header is ignored (as the spec says) with a warning. */
function requestTrace(c: HubContext, warnings: string[]): string | undefined {
  const header = c.req.header("traceparent");
  const trace = parseTraceparent(header);
  if (header !== undefined && !trace)
    warnings.push("traceparent header ignored: not a W3C traceparent (version-traceid-parentid-flags); the hub began a new trace");
  return trace?.traceparent;
}

/** A create: the core protocol's, or a task-format request (seeds/task-format.md). `repeated`: the same request came before. */
export async function createAnyTask(c: HubContext): Promise<{ view: TaskView; repeated: boolean }> {
  const raw = await readJson(c, z.unknown());
  return isTaskFormatRequest(raw) ? createTaskFormatTask(c, raw as Record<string, unknown>) : { view: await createTask(c, raw), repeated: false };
}

/**
 * A task-format request: its `id` names the task in the project (the same
 * request again answers the task, another one under the id is refused), its
 * blocks are kept, routing.target assigns it, observability.traceId continues
 * its trace unless a traceparent header came; a subtask (context.parentTaskId)
 * joins its parent's trace.
 */
async function createTaskFormatTask(c: HubContext, raw: Record<string, unknown>) {
  const request = parseWith(taskFormatRequest, raw);
  const warnings: string[] = [];
  const header = requestTrace(c, warnings);
  const project = await projectOfNewTask(c, request);
  const parentId = request.context?.parentTaskId;
  const sent = { traceparent: header, traceId: traceIdOf(request) };
  const traceparent = (parentId ? subtaskTrace(await parentTask(c, project.id, parentId), sent, warnings) : header) ?? beginTrace(sent.traceId).traceparent;
  const { origin, ...task } = newTaskOf(request, await sha256Hex(requestForHash(raw)), warnings);
  const target = request.routing?.target;
  let assignTo: AssignTarget | undefined;
  try {
    assignTo = target ? await routingTarget(c, project.id, target) : undefined;
  } catch (e) {
    // A repeat answers the task it made, even once the target it named has gone.
    const made = await c.var.db.query.tasks.findFirst({
      where: and(eq(tasks.projectId, project.id), eq(tasks.clientId, request.id), eq(tasks.clientRequestHash, origin!.clientRequestHash!)),
      columns: { id: true },
    });
    if (!made) throw e;
    return { view: await taskView1(c.var.db, made.id), repeated: true };
  }
  const { result, view } = await runInRoomForView(c, project.id, {
    op: "create",
    task: newTask({ ...task, sourceSessionId: request.session_id ?? null, origin: { ...origin, traceparent, ...(assignTo ? { assignTo } : {}) } }),
    dependencies: [],
  });
  rememberProjectOf(view.id, project.id);
  return { view, repeated: result.unchanged === true };
}

export async function createTask(c: HubContext, raw?: unknown) {
  const body = raw === undefined ? await readJson(c, createTaskBody) : parseWith(createTaskBody, raw);
  const warnings = protocolWarnings(body);
  const traceparent = requestTrace(c, warnings);
  const project = await projectOfNewTask(c, body);
  const dependencies = [
    ...(body.dependencies ?? []),
    // Legacy dependency_ids are blocks dependencies without contracts (seed §3).
    ...(body.dependency_ids ?? []).map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" as const, contract_key: null })),
  ];
  const { view } = await runInRoomForView(c, project.id, {
    op: "create",
    task: {
      title: body.title,
      spec: body.spec,
      type: body.type,
      priority: body.priority,
      targetRepo: body.target_repo ?? null,
      targetBranch: body.target_branch ?? null,
      acceptanceCriteria: body.acceptance_criteria,
      structuredSpec: ((await offloadFor(c, project.id)(body.structured_spec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | undefined) ?? null,
      requirements: body.requirements ?? null,
      requirePlan: body.require_plan,
      timeoutSeconds: body.timeout_seconds ?? null,
      sourceSessionId: body.session_id ?? null,
      warnings,
      origin: { ...(traceparent ? { traceparent } : {}) },
    },
    dependencies,
  });
  rememberProjectOf(view.id, project.id);
  return view;
}

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
  const page = await listTasks(c.var.db, { projectIds, ids: q.ids, statuses: q.status, limit: q.limit, cursor: q.cursor });
  return { tasks: page.tasks, count: page.tasks.length, next_cursor: page.next_cursor };
}

async function updateTask(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, updateTaskBody);
  const warnings = protocolWarnings(body);
  const changes: TaskChanges = {
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.spec !== undefined ? { spec: body.spec } : {}),
    ...(body.type !== undefined ? { type: body.type } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    ...(body.target_repo !== undefined ? { targetRepo: body.target_repo } : {}),
    ...(body.target_branch !== undefined ? { targetBranch: body.target_branch } : {}),
    ...(body.acceptance_criteria !== undefined ? { acceptanceCriteria: body.acceptance_criteria } : {}),
    ...(body.structured_spec !== undefined
      ? { structuredSpec: (await offloadFor(c, task.projectId)(body.structured_spec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | null }
      : {}),
    ...(body.requirements !== undefined ? { requirements: body.requirements } : {}),
    ...(body.require_plan !== undefined ? { requirePlan: body.require_plan } : {}),
    ...(body.timeout_seconds !== undefined ? { timeoutSeconds: body.timeout_seconds } : {}),
    ...(body.payload !== undefined ? { payload: body.payload } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
  return (await runInRoomForView(c, task.projectId, { op: "update", taskId: task.id, changes })).view;
}

/** Finds who a task goes to: an open session by name (optionally on a named server), a session id, or a server by name. */
async function assignTarget(
  c: HubContext,
  projectId: string,
  body: Pick<z.output<typeof assignBody>, "session_name" | "server_name" | "session_id">,
): Promise<AssignTarget> {
  const { db } = c.var;
  if (body.session_name || body.session_id) {
    const rows = await db
      .select({ session: sessions, server: servers })
      .from(sessions)
      .innerJoin(servers, eq(servers.id, sessions.serverId))
      .where(
        and(
          eq(sessions.projectId, projectId),
          inArray(sessions.status, OPEN_SESSION_STATUSES),
          body.session_id ? eq(sessions.id, body.session_id) : eq(sessions.name, body.session_name!),
          body.server_name ? eq(servers.name, body.server_name) : undefined,
        ),
      );
    const live = rows.filter((r) => !r.server.revokedAt);
    const named = body.session_name ? `named "${body.session_name}"` : body.session_id!;
    if (live.length === 0) throw notFound(`Open session ${named} in this project`);
    if (live.length > 1) {
      throw conflict(`${live.length} open sessions are ${named}; add server_name to choose one`, "AMBIGUOUS_SESSION", {
        servers: live.map((r) => r.server.name),
      });
    }
    const { session, server } = live[0]!;
    return { serverId: server.id, serverName: server.name, sessionId: session.id, sessionName: session.name };
  }
  const server = await db.query.servers.findFirst({ where: eq(servers.name, body.server_name!) });
  if (!server || server.revokedAt || !scopesOverlap(server.projectIds ?? null, [projectId])) {
    throw notFound(`Server "${body.server_name}" serving this project`);
  }
  return { serverId: server.id, serverName: server.name, sessionId: null, sessionName: null };
}

/** A task-format routing.target: an open session of that name in the project, else a server of that name serving it. */
async function routingTarget(c: HubContext, projectId: string, name: string): Promise<AssignTarget> {
  for (const by of [{ session_name: name }, { server_name: name }]) {
    try {
      return await assignTarget(c, projectId, by);
    } catch (e) {
      if (!(e instanceof Problem && e.status === 404)) throw e;
    }
  }
  throw fieldError("routing.target", `names no open session in the project and no server serving it: ${JSON.stringify(name)}`);
}

async function assignTask(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, assignBody);
  const target = await assignTarget(c, task.projectId, body);
  return (await runInRoomForView(c, task.projectId, { op: "assign", taskId: task.id, target, requirePlan: body.require_plan })).view;
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

/** Runs a body-less or simple transition and answers the task as it is afterwards. */
async function transition(c: HubContext, taskId: string, command: (id: string, projectId: string) => Promise<Parameters<typeof runInRoom>[2]>) {
  const task = await taskFor(c, taskId, "write");
  const { result, view } = await runInRoomForView(c, task.projectId, await command(task.id, task.projectId));
  // Completing again with the same result changes nothing: the copy of its large parts just stored is not needed.
  if (result.unchanged) await discardOffloaded(c, pointedTo([view.result, view.response]));
  return view;
}

export const startTask = (c: HubContext, id: string) => transition(c, id, async (taskId) => ({ op: "start", taskId }));

/** `result`, or a task-format Task Response: completed with its artifacts and metadata, or failed with its error block. */
export const completeTask = (c: HubContext, id: string) => transition(c, id, (taskId, projectId) => completionCommand(c, taskId, projectId));

/** `error` is text (the official CLI) or a task-format error block {code, message, details?, recoverable?}. */
export const failTask = (c: HubContext, id: string) =>
  transition(c, id, async (taskId) => ({ op: "fail", taskId, ...failureOf((await readJson(c, failRequest)).error) }));

export async function askForHelp(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, helpBody);
  const target = body.target_session_id;
  // Another agent answers only questions: asking one for help or approval is refused rather than never answerable.
  if (target && (body.intervention_type ?? "question") !== "question") {
    throw fieldError("intervention_type", "must be question when target_session_id names a session to ask");
  }
  const context = await offloadFor(c, task.projectId)(body.context, OFFLOAD_DEPTH.whole);
  const { data } = await runInRoom(
    c,
    task.projectId,
    target
      ? { op: "ask_agent", taskId: task.id, question: body.question, context, targetSessionId: target }
      : { op: "help", taskId: task.id, question: body.question, context, interventionType: body.intervention_type ?? "help" },
  );
  return { intervention_id: data!.intervention_id as string, status: "pending" as const, task_id: task.id };
}

export const UNFINISHED = TASK_STATUSES.filter((s) => !FINISHED.includes(s));

/** Every server that could take the task, scored as seed §5 says, best first. */
async function matchingAgents(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId);
  const row = await c.var.db.query.tasks.findFirst({ where: eq(tasks.id, task.id), columns: { requirements: true, rejectedBy: true } });
  const candidates = await serverCandidates(c.var.db, task.projectId);
  const servers = rankServers((row!.requirements ?? {}) as Requirements, candidates, row!.rejectedBy).map(({ active_tasks: _, ...match }) => match);
  return { servers, total: servers.length };
}

const checkQuery = z.object({ session_id: uuid.optional() });

/** Tasks assigned to the calling agent's session (or, without session_id, its server) that are not finished. */
async function checkAssigned(c: HubContext) {
  const server = currentServer(c);
  const { session_id } = readQuery(c, checkQuery);
  if (session_id) {
    const session = await c.var.db.query.sessions.findFirst({ where: eq(sessions.id, session_id) });
    if (!session || !scopesOverlap(server.projectIds ?? null, [session.projectId])) throw notFound("Session");
  }
  const page = await listTasks(c.var.db, {
    projectIds: server.projectIds ?? null,
    statuses: UNFINISHED,
    ...(session_id ? { forSession: session_id } : { assignedServerId: server.id }),
    limit: 200,
  });
  return { count: page.tasks.length, tasks: page.tasks };
}

/** The most events a task's timeline shows: a task has a handful, a runaway one shows its first thousand. */
const TIMELINE_LIMIT = 1000;

const takenBack = "Refused with 403 `NOT_ALLOWED` when the caller is not the task's assignee; 409 `INVALID_TRANSITION` from any other status.";

/** A request header a create reads (Idempotency-Key, read on every POST, is stated for all of them by the document). */
const TRACEPARENT = { traceparent: "W3C trace context kept on the task; a malformed one is ignored with a warning and the hub begins a trace" };

const taskFormatOrTask = "With `?format=task-format`, the task-format response (seeds/task-format.md §Task Response) instead of the hub's task object.";

const helpAnswer = z.object({ intervention_id: id, status: z.literal("pending"), task_id: id });
const removedDependency = z.object({ removed: z.literal(true), task_id: id, depends_on_task_id: id });
const serverMatch = z.object({
  server_id: id,
  server_name: z.string(),
  score: z.int().meta({ description: "-1: disqualified (the first reason says why)" }),
  status: z.enum(["online", "offline"]),
  reasons: z.array(z.string()).meta({ description: "The seed §5 strings, e.g. `repo match: api (+100)`" }),
});
const matches = z.object({ servers: z.array(serverMatch).meta({ description: "Best first; disqualified servers last" }), total: z.int() });
const autoAssigned = z.union([
  z.object({ status: z.literal("assigned"), server_id: id, server_name: z.string(), match_score: z.int() }),
  z.object({ status: z.literal("no_match").meta({ description: "No server qualifies: the task stays pending" }) }),
]);
const assignedTasks = z.object({ count: z.int(), tasks: z.array(taskSchema) });
const timeline = z.object({ events: z.array(eventSchema).meta({ description: `In seq order; at most the first ${TIMELINE_LIMIT}` }) });

/** The task routes of one surface: the same operations, each under its own operation id and tag. */
export function taskRoutes(surface: "people" | "agents") {
  const r = new Hono<HubEnv>();
  const people = surface === "people";
  const read = people ? person() : agent;
  // Every agent write here is made by a project's room, which refuses a revoked key itself.
  const write = people ? person("member") : roomAgent;
  const taskId = (c: HubContext) => c.req.param("id")!;
  /** This surface's description of an operation: agents' ids are prefixed (`agentStartTask`). */
  const describe = (op: Omit<Operation, "tag" | "caller">) =>
    documented({
      ...op,
      id: people ? op.id : `agent${op.id[0]!.toUpperCase()}${op.id.slice(1)}`,
      tag: people ? "Tasks" : "Agent tasks",
      caller: people ? "person" : "agent",
    });

  if (!people) {
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
  r.post(
    "/",
    describe({
      id: "createTask",
      summary: "Create a task",
      description:
        "Create a task (core task-spec body, or a task-format request).\n\n" +
        "A body with `payload` and no `title` is a **task-format request** (seeds/task-format.md); any other body is the core protocol's (seed §1). " +
        "The project is `project_id`, or that of the `session_id` it comes from.\n\n" +
        "- Core: `structured_spec` must be an orchestratia/task-spec (another version is accepted with a warning); `requirements` are checked as " +
        "requirements/v1; `dependencies` (or legacy `dependency_ids`, taken as `blocks`) name tasks of the same project (422 otherwise). " +
        "Large JSON goes to R2 as DataRefs.\n" +
        "- Task-format: `id` names the task in the project (`client_id`): the same request again answers **200** with the task it made; another " +
        "body under that id is 409 `TASK_ID_TAKEN`. `routing.target` (an open session's name, else a server's) assigns the task at once; " +
        "`observability.traceId` continues its trace unless a `traceparent` header came. A field the request does not define is refused by name.",
      headers: TRACEPARENT,
      body: z.union([createTaskBody, taskFormatRequest]),
      responses: { 201: taskSchema, 200: { description: "A task-format request sent again: the task it made", schema: taskSchema } },
    }),
    write,
    async (c) => {
      const { view, repeated } = await createAnyTask(c);
      return c.json(view, repeated ? 200 : 201);
    },
  );
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
      const view = await taskView1(c.var.db, (await taskByEitherId(c, taskId(c), project_id)).id);
      return c.json(format === "task-format" ? taskFormatView(view) : view);
    },
  );
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
    async (c) => c.json(await envelopeOf(c.var.db, (await taskFor(c, taskId(c))).id)),
  );
  r.put(
    "/:id",
    describe({
      id: "updateTask",
      summary: "Update a task",
      description:
        "Change a task's fields.\n\n" +
        "Only the fields sent change (at least one). Once the task has left `pending`, `spec`, `structured_spec`, `requirements`, `type` and " +
        "`payload` are immutable: a different value is 409 `TASK_IMMUTABLE` (sending the current value again is no change).",
      body: updateTaskBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await updateTask(c, taskId(c))),
  );
  r.delete(
    "/:id",
    describe({
      id: "cancelTask",
      summary: "Cancel a task",
      description:
        "Cancel a task (→ `cancelled`).\n\n" +
        "From any unfinished status, by anyone who may write to the project; a finished task is 409 `INVALID_TRANSITION`. The body is optional.",
      body: cancelBody,
      bodyRequired: false,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "cancel", taskId: id, reason: (await readJson(c, cancelBody)).reason ?? null }))),
  );
  r.post(
    "/:id/assign",
    describe({
      id: "assignTask",
      summary: "Assign a task",
      description:
        "Give a task to a session or a server (→ `assigned`, or `planning` with `require_plan`).\n\n" +
        "From `pending`, `assigned` or `planning`. `session_name` or `session_id` names an open session in the task's project (add `server_name` " +
        "when the name is open on several servers: otherwise 409 `AMBIGUOUS_SESSION`); `server_name` alone names a server serving the project. " +
        "An unknown target is 404.",
      body: assignBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await assignTask(c, taskId(c))),
  );
  r.post(
    "/:id/start",
    describe({
      id: "startTask",
      summary: "Start a task",
      description:
        "Start work on an assigned task (→ `running`).\n\n" +
        `By the assignee, from \`assigned\`; 409 \`UNRESOLVED_DEPENDENCIES\` while the task is blocked, 409 \`TASK_AWAITING_APPROVAL\` while it waits for a person's approval. ${takenBack}`,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await startTask(c, taskId(c))),
  );
  r.post(
    "/:id/complete",
    describe({
      id: "completeTask",
      summary: "Complete a task",
      description:
        "Complete a running task with its result (→ `done`).\n\n" +
        "By the assignee, from `running`. `result` is a task-result/v1 object, a legacy object, or a string (kept as " +
        "`{summary, completed_by}`); contract entries without a `status` are fulfilled data. An output envelope (`success` and `recommendation`) " +
        "decides the outcome: `proceed` with success → `done`; `retry` or `success: false` → `failed` (recoverable); `escalate` → `needs_human`.\n\n" +
        "Completing again with the same result is a no-op (200); with another, 409 `RESULT_CONFLICT`. A result for a failed or cancelled task is " +
        `409 but kept as \`late_result\`. ${takenBack}`,
      body: completeBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await completeTask(c, taskId(c))),
  );
  r.post(
    "/:id/fail",
    describe({
      id: "failTask",
      summary: "Fail a task",
      description:
        "Fail a task (→ `failed`).\n\n" +
        "By the assignee, from `assigned`, `planning`, `plan_review`, `running` or `needs_human`. `error` is text, or a task-format error block " +
        "`{code, message, details?, recoverable?}` kept as the task's `error` (its `code` as `error_code`); without it the task fails " +
        `"without a reason". ${takenBack}`,
      body: failRequest,
      bodyRequired: false,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await failTask(c, taskId(c))),
  );
  r.post(
    "/:id/help",
    describe({
      id: "askForHelp",
      summary: "Ask for help",
      description:
        "Ask a person a question about a running task (→ `needs_human`), or ask another agent (`target_session_id`).\n\n" +
        `By the assignee, from \`running\` or \`needs_human\`. The task resumes when its last open intervention is answered. ${takenBack}\n\n` +
        "With `target_session_id` (the daemon's `ask_agent`), the question goes to the agent of that open session of the task's project " +
        "(422 naming `target_session_id` for any other session, or the task's own): its daemon is sent `intervention_for_session`, that agent " +
        "answers at `POST /api/v1/server/interventions/{id}/respond`, and the answer comes back to the asking session as `intervention_response`. " +
        "The task keeps its status meanwhile.",
      body: helpBody,
      responses: { 200: helpAnswer },
    }),
    write,
    async (c) => c.json(await askForHelp(c, taskId(c))),
  );
  r.post(
    "/:id/plan",
    describe({
      id: "submitPlan",
      summary: "Submit a plan",
      description:
        "Submit a plan for review (`planning` → `plan_review`).\n\n" +
        `By the assignee; 409 \`TASK_AWAITING_APPROVAL\` while the task waits for a person's approval. A large plan goes to R2 as a DataRef. ${takenBack}`,
      body: planBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) =>
      c.json(
        await transition(c, taskId(c), async (id, projectId) => ({
          op: "plan",
          taskId: id,
          plan: await offloadFor(c, projectId)((await readJson(c, planBody)).plan, OFFLOAD_DEPTH.whole),
        })),
      ),
  );
  r.post(
    "/:id/approve-plan",
    describe({
      id: "approvePlan",
      summary: "Approve a plan",
      description:
        "Approve the plan (`plan_review` → `running`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`); 409 `UNRESOLVED_DEPENDENCIES` while the task is blocked.",
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "approve_plan", taskId: id }))),
  );
  if (people) {
    r.post(
      "/:id/approve",
      describe({
        id: "approveTask",
        summary: "Approve a task",
        description:
          "Let a task an agent created go ahead, in a project that approves agents' tasks (`settings.approve_agent_tasks`).\n\n" +
          "Members and admins of the project. Clears `awaiting_approval` (event `task_approved`): a pending task is offered to auto-assignment " +
          "at once; the daemon of the session it is given to is sent `task_approved`, and starts its agent on it. A task that is not " +
          "awaiting approval is 409 `NOT_AWAITING_APPROVAL`; a finished one, 409 `INVALID_TRANSITION`.",
        responses: { 200: taskSchema },
      }),
      write,
      async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "approve", taskId: id }))),
    );
  }
  r.post(
    "/:id/revise-plan",
    describe({
      id: "revisePlan",
      summary: "Ask for plan changes",
      description:
        "Send the plan back with feedback (`plan_review` → `planning`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`). The feedback is the task's `plan_feedback`.",
      body: reviseBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "revise_plan", taskId: id, feedback: (await readJson(c, reviseBody)).feedback }))),
  );
  r.post(
    "/:id/reject",
    describe({
      id: "rejectTask",
      summary: "Reject a task",
      description:
        "Decline an assigned task (`assigned` or `planning` → `pending`).\n\n" +
        `By the assignee (compute protocol): the assignment is cleared, and auto-assignment never offers the task to this server again. ${takenBack}`,
      body: rejectBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "reject", taskId: id, reason: (await readJson(c, rejectBody)).reason }))),
  );
  r.post(
    "/:id/retry",
    describe({
      id: "retryTask",
      summary: "Retry a task",
      description:
        "Run a failed task again (`failed` → `pending`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`). The result, error and assignment are cleared and `retry_count` goes up; servers that rejected it stay passed over.",
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "retry", taskId: id }))),
  );
  r.post(
    "/:id/dependencies",
    describe({
      id: "addTaskDependency",
      summary: "Add a dependency",
      description:
        "Make the task depend on another task of its project.\n\n" +
        "Only while the task is `pending` (otherwise 409 `TASK_IMMUTABLE`). An `input` dependency needs the upstream result's `contract_key`. " +
        "A dependency that would close a cycle is 409 `DEPENDENCY_CYCLE`; an upstream not in the project is 422.",
      body: dependencySchema,
      responses: { 201: taskDependencySchema },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const body = await readJson(c, dependencySchema);
      await runInRoom(c, task.projectId, { op: "add_dependency", taskId: task.id, dependency: body });
      const dep = (await dependenciesOf(c.var.db, [task.id])).find((d) => d.dependsOnTaskId === body.depends_on_task_id)!;
      return c.json(dependencyView(dep), 201);
    },
  );
  r.delete(
    "/:id/dependencies/:upstreamId",
    describe({
      id: "removeTaskDependency",
      summary: "Remove a dependency",
      description:
        "Remove one of the task's dependencies.\n\n" +
        "Only while the task is `pending` (otherwise 409 `TASK_IMMUTABLE`). A task it leaves unblocked may be auto-assigned at once.",
      responses: { 200: removedDependency },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const upstreamId = c.req.param("upstreamId");
      await runInRoom(c, task.projectId, { op: "remove_dependency", taskId: task.id, dependsOnTaskId: upstreamId });
      return c.json({ removed: true as const, task_id: task.id, depends_on_task_id: upstreamId });
    },
  );
  r.get(
    "/:id/matching-agents",
    describe({
      id: "matchingAgents",
      summary: "Match servers to a task",
      description: "Every server that could take the task, scored (seed §5), best first.",
      responses: { 200: matches },
    }),
    read,
    async (c) => c.json(await matchingAgents(c, taskId(c))),
  );
  r.post(
    "/:id/auto-assign",
    describe({
      id: "autoAssignTask",
      summary: "Auto-assign a task",
      description:
        "Assign a pending task to the best-scoring server (seed §5).\n\n" +
        "Only a `pending` task (409 `INVALID_TRANSITION` otherwise) with requirements (422 `NO_REQUIREMENTS` otherwise), not waiting for a " +
        "person's approval (409 `TASK_AWAITING_APPROVAL`). " +
        "`no_match` when no server qualifies; the task then stays pending.",
      responses: { 200: autoAssigned },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const { data } = await runInRoom(c, task.projectId, { op: "auto_assign", taskId: task.id });
      return c.json(data as z.infer<typeof autoAssigned>);
    },
  );
  r.post(
    "/:id/notes",
    describe({
      id: "addTaskNote",
      summary: "Add a note",
      description:
        "Leave a note on the task.\n\n" +
        "By anyone who may write to the project, in any status. The note reaches the task's agent (event `note_added`), and its envelope's `prior_context`. " +
        "With `notify_dependents`, the sessions working on the unfinished tasks that depend on it (`blocks` or `input`) are sent it as " +
        '`note_for_session` with `mentioned_via: "dependency"`, as they are when the task completes.',
      body: noteBody,
      responses: { 201: noteSchema },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const body = await readJson(c, noteBody);
      const { data } = await runInRoom(c, task.projectId, {
        op: "note",
        taskId: task.id,
        content: body.content,
        urgent: body.urgent,
        notifyDependents: body.notify_dependents,
      });
      // The room answers the note it wrote, so the answer costs no read.
      return c.json(noteView(data!.note as NoteRow), 201);
    },
  );
  r.get(
    "/:id/notes",
    describe({ id: "listTaskNotes", summary: "List notes", description: "The task's notes, oldest first.", responses: { 200: z.array(noteSchema) } }),
    read,
    async (c) => {
      const task = await taskFor(c, taskId(c));
      return c.json((await notesOf(c.var.db, task.id)).map(noteView));
    },
  );
  r.get(
    "/:id/events",
    describe({
      id: "listTaskEvents",
      summary: "List a task's events",
      description: "The task's own events in seq order: its timeline.",
      responses: { 200: timeline },
    }),
    read,
    async (c) => {
      const task = await taskFor(c, taskId(c));
      const rows = await c.var.db
        .select()
        .from(events)
        .where(and(eq(events.projectId, task.projectId), eq(events.taskId, task.id)))
        .orderBy(asc(events.seq))
        .limit(TIMELINE_LIMIT);
      return c.json({ events: rows.map(eventView) });
    },
  );
  return r;
}
