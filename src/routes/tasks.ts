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
import { assertAccess, membershipOf, principalOf, projectFor, scopesOverlap, visibleProjectIds, type Access } from "../auth/access";
import { agent, currentServer, person } from "../auth/middleware";
import { dependenciesOf, listTasks, notesOf, taskView1 } from "../db/task-queries";
import { envelopeOf } from "../db/task-envelope";
import { events, OPEN_SESSION_STATUSES, servers, sessions, taskNotes, tasks } from "../db/schema";
import { FINISHED, TASK_STATUSES, type TaskStatus } from "../domain/lifecycle";
import { failRequest, failureOf, isTaskFormatRequest, newTaskOf, requestForHash, STATUS_ALIASES, taskFormatRequest, taskFormatResponse, traceIdOf } from "../protocol/task-format";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";
import { sha256Hex } from "../auth/secrets";
import { normaliseResult } from "../domain/results";
import { parseWith, readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, fieldError, notFound, Problem, validationFailed } from "../http/problem";
import {
  assignBody,
  cancelBody,
  checkTaskProtocol,
  completeBody,
  createTaskBody,
  helpBody,
  noteBody,
  planBody,
  reviseBody,
  updateTaskBody,
} from "../protocol/hub-api";
import type { AssignTarget, TaskChanges } from "../room/commands";
import { roomActor, runInRoom, runInRoomForView } from "../room/client";
import { OFFLOAD_DEPTH, pointedTo } from "../offload";
import { discardOffloaded, offloaderFor } from "../http/request-offloads";
import { eventView } from "../views/events";
import { dependencyView, noteView, type TaskView } from "../views/tasks";
import { rankServers } from "../domain/matching";
import { dependencySchema, type Requirements } from "../protocol/orchestratia-v1";
import { serverCandidates } from "../db/server-candidates";
import { rememberedProjectOf, rememberProjectOf } from "../db/task-projects";
import { rejectBody } from "../protocol/compute-protocol";

/** Large JSON the caller sends for this project goes to R2 (see offload.ts). */
const offloadFor = (c: HubContext, projectId: string) => offloaderFor(c, projectId, roomActor(c).label);

/**
 * The task, if the caller can see its project (404 otherwise, like a missing
 * one). One query; none for an agent's write to a task whose project this
 * isolate already knows (the room then reads the task itself, and answers 404
 * if it is gone).
 */
export async function taskFor(c: HubContext, taskId: string, access: Access = "read") {
  if (!isUuid(taskId)) throw notFound("Task");
  const p = principalOf(c);
  const known = access === "write" && p.kind === "server" ? rememberedProjectOf(taskId) : undefined;
  if (known) {
    assertAccess(p, known, false, access, "Task");
    noteTask(c, taskId, known);
    return { id: taskId, projectId: known };
  }
  const [task] = await c.var.db
    .select({ id: tasks.id, projectId: tasks.projectId, member: membershipOf(p, tasks.projectId) })
    .from(tasks)
    .where(eq(tasks.id, taskId));
  if (!task) throw notFound("Task");
  rememberProjectOf(task.id, task.projectId);
  assertAccess(p, task.projectId, task.member !== null, access, "Task");
  noteTask(c, task.id, task.projectId);
  return task;
}

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
  if (header !== undefined && !trace) warnings.push("traceparent header ignored: not a W3C traceparent (version-traceid-parentid-flags); the hub began a new trace");
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
 * its trace unless a traceparent header came.
 */
async function createTaskFormatTask(c: HubContext, raw: Record<string, unknown>) {
  const request = parseWith(taskFormatRequest, raw);
  const warnings: string[] = [];
  const traceparent = requestTrace(c, warnings) ?? beginTrace(traceIdOf(request)).traceparent;
  const project = await projectOfNewTask(c, request);
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
    task: {
      ...task,
      targetRepo: null,
      targetBranch: null,
      acceptanceCriteria: [],
      structuredSpec: null,
      requirements: null,
      requirePlan: false,
      timeoutSeconds: null,
      sourceSessionId: request.session_id ?? null,
      origin: { ...origin, traceparent, ...(assignTo ? { assignTo } : {}) },
    },
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

const listQuery = z.object({
  project_id: z.uuid("must be a UUID").optional(),
  // The hub's statuses, and the task-format names for them (in_progress, completed, input_required).
  status: z
    .string()
    .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum([...TASK_STATUSES, ...STATUS_NAMES], { error: `must be one of ${[...TASK_STATUSES, ...STATUS_NAMES].join(", ")}` })))
    .transform((names) => [...new Set(names.flatMap((n) => STATUS_ALIASES[n] ?? [n as TaskStatus]))])
    .optional(),
  limit: z.coerce.number().int().min(1, "must be at least 1").max(200, "must be at most 200").default(50),
  cursor: z.string().max(500).optional(),
  /** Only these tasks: a live view reads the tasks its events named in one request. */
  ids: z
    .string()
    .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(uuid).min(1, "name at least one task").max(200, "at most 200 tasks"))
    .optional(),
});

/** `?format=task-format` answers tasks in the task-format response shape; without it, the hub's own. */
const formatQuery = z.looseObject({ format: z.enum(["task-format"], { error: "must be task-format (or left out for the hub's own shape)" }).optional() });
const readFormat = (c: HubContext) => readQuery(c, formatQuery).format;

async function listVisibleTasks(c: HubContext) {
  const q = readQuery(c, listQuery);
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
    ...(body.structured_spec !== undefined ? { structuredSpec: (await offloadFor(c, task.projectId)(body.structured_spec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | null } : {}),
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

/** Runs a body-less or simple transition and answers the task as it is afterwards. */
async function transition(c: HubContext, taskId: string, command: (id: string, projectId: string) => Promise<Parameters<typeof runInRoom>[2]>) {
  const task = await taskFor(c, taskId, "write");
  const { result, view } = await runInRoomForView(c, task.projectId, await command(task.id, task.projectId));
  // Completing again with the same result changes nothing: the copy of its large parts just stored is not needed.
  if (result.unchanged) await discardOffloaded(c, pointedTo(view.result));
  return view;
}

export const startTask = (c: HubContext, id: string) => transition(c, id, async (taskId) => ({ op: "start", taskId }));

export const completeTask = (c: HubContext, id: string) =>
  transition(c, id, async (taskId, projectId) => {
    const body = await readJson(c, completeBody);
    const p = c.var.principal!;
    const normalised = normaliseResult(body.result, p.kind === "server" ? p.server.name : p.user.email);
    if (!normalised.ok) throw validationFailed(normalised.errors);
    const result = (await offloadFor(c, projectId)(normalised.result, OFFLOAD_DEPTH.result)) as Record<string, unknown>;
    return { op: "complete", taskId, result, structured: normalised.structured, warnings: normalised.warnings, ...(normalised.envelope ? { envelope: normalised.envelope } : {}) };
  });

/** `error` is text (the official CLI) or a task-format error block {code, message, details?, recoverable?}. */
export const failTask = (c: HubContext, id: string) =>
  transition(c, id, async (taskId) => ({ op: "fail", taskId, ...failureOf((await readJson(c, failRequest)).error) }));

export async function askForHelp(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, helpBody);
  const { data } = await runInRoom(c, task.projectId, {
    op: "help",
    taskId: task.id,
    question: body.question,
    context: await offloadFor(c, task.projectId)(body.context, OFFLOAD_DEPTH.whole),
    interventionType: body.intervention_type,
    targetSessionId: body.target_session_id ?? null,
  });
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

/** The task routes of one surface. */
export function taskRoutes(surface: "people" | "agents") {
  const r = new Hono<HubEnv>();
  const read = surface === "people" ? person() : agent;
  const write = surface === "people" ? person("member") : agent;
  const id = (c: HubContext) => c.req.param("id")!;

  if (surface === "agents") r.get("/check", read, async (c) => c.json(await checkAssigned(c)));
  r.post("/", write, async (c) => {
    const { view, repeated } = await createAnyTask(c);
    return c.json(view, repeated ? 200 : 201);
  });
  r.get("/", read, async (c) => {
    const format = readFormat(c);
    const page = await listVisibleTasks(c);
    return c.json(format === "task-format" ? { ...page, tasks: page.tasks.map(taskFormatResponse) } : page);
  });
  r.get("/:id", read, async (c) => {
    const format = readFormat(c);
    const view = await taskView1(c.var.db, (await taskFor(c, id(c))).id);
    return c.json(format === "task-format" ? taskFormatResponse(view) : view);
  });
  r.get("/:id/envelope", read, async (c) => c.json(await envelopeOf(c.var.db, (await taskFor(c, id(c))).id)));
  r.put("/:id", write, async (c) => c.json(await updateTask(c, id(c))));
  r.delete("/:id", write, async (c) =>
    c.json(await transition(c, id(c), async (taskId) => ({ op: "cancel", taskId, reason: (await readJson(c, cancelBody)).reason ?? null }))),
  );
  r.post("/:id/assign", write, async (c) => c.json(await assignTask(c, id(c))));
  r.post("/:id/start", write, async (c) => c.json(await startTask(c, id(c))));
  r.post("/:id/complete", write, async (c) => c.json(await completeTask(c, id(c))));
  r.post("/:id/fail", write, async (c) => c.json(await failTask(c, id(c))));
  r.post("/:id/help", write, async (c) => c.json(await askForHelp(c, id(c))));
  r.post("/:id/plan", write, async (c) =>
    c.json(
      await transition(c, id(c), async (taskId, projectId) => ({ op: "plan", taskId, plan: await offloadFor(c, projectId)((await readJson(c, planBody)).plan, OFFLOAD_DEPTH.whole) })),
    ),
  );
  r.post("/:id/approve-plan", write, async (c) => c.json(await transition(c, id(c), async (taskId) => ({ op: "approve_plan", taskId }))));
  r.post("/:id/revise-plan", write, async (c) =>
    c.json(await transition(c, id(c), async (taskId) => ({ op: "revise_plan", taskId, feedback: (await readJson(c, reviseBody)).feedback }))),
  );
  r.post("/:id/reject", write, async (c) =>
    c.json(await transition(c, id(c), async (taskId) => ({ op: "reject", taskId, reason: (await readJson(c, rejectBody)).reason }))),
  );
  r.post("/:id/retry", write, async (c) => c.json(await transition(c, id(c), async (taskId) => ({ op: "retry", taskId }))));
  r.post("/:id/dependencies", write, async (c) => {
    const task = await taskFor(c, id(c), "write");
    const body = await readJson(c, dependencySchema);
    await runInRoom(c, task.projectId, { op: "add_dependency", taskId: task.id, dependency: body });
    const dep = (await dependenciesOf(c.var.db, [task.id])).find((d) => d.dependsOnTaskId === body.depends_on_task_id)!;
    return c.json(dependencyView(dep), 201);
  });
  r.delete("/:id/dependencies/:upstreamId", write, async (c) => {
    const task = await taskFor(c, id(c), "write");
    const upstreamId = c.req.param("upstreamId");
    await runInRoom(c, task.projectId, { op: "remove_dependency", taskId: task.id, dependsOnTaskId: upstreamId });
    return c.json({ removed: true, task_id: task.id, depends_on_task_id: upstreamId });
  });
  r.get("/:id/matching-agents", read, async (c) => c.json(await matchingAgents(c, id(c))));
  r.post("/:id/auto-assign", write, async (c) => {
    const task = await taskFor(c, id(c), "write");
    const { data } = await runInRoom(c, task.projectId, { op: "auto_assign", taskId: task.id });
    return c.json(data);
  });
  r.post("/:id/notes", write, async (c) => {
    const task = await taskFor(c, id(c), "write");
    const body = await readJson(c, noteBody);
    const { data } = await runInRoom(c, task.projectId, { op: "note", taskId: task.id, content: body.content, urgent: body.urgent });
    const note = (await c.var.db.query.taskNotes.findFirst({ where: eq(taskNotes.id, data!.note_id as string) }))!;
    return c.json(noteView(note), 201);
  });
  r.get("/:id/notes", read, async (c) => {
    const task = await taskFor(c, id(c));
    return c.json((await notesOf(c.var.db, task.id)).map(noteView));
  });
  /** The task's own events, in seq order: its timeline. */
  r.get("/:id/events", read, async (c) => {
    const task = await taskFor(c, id(c));
    const rows = await c.var.db
      .select()
      .from(events)
      .where(and(eq(events.projectId, task.projectId), eq(events.taskId, task.id)))
      .orderBy(asc(events.seq))
      .limit(TIMELINE_LIMIT);
    return c.json({ events: rows.map(eventView) });
  });
  return r;
}
