/**
 * Creating a task: the core protocol's task-spec body, or a task-format
 * request (seeds/task-format.md), in the project named or that of the
 * creating session.
 */
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { findOnShards } from "../views/shard-lists";
import { taskView1 } from "../views/task-queries";
import { sessions, tasks } from "../db/schema";
import { isTaskFormatRequest, newTaskOf, requestForHash, taskFormatRequest, traceIdOf } from "../protocol/task-format";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";
import { sha256Hex } from "../auth/secrets";
import { parseWith, readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { fieldError, Problem, validationFailed } from "../http/problem";
import { checkTaskProtocol, createTaskBody } from "../protocol/hub-api";
import { newTask, type AssignTarget } from "../room/commands";
import { runInRoomForView } from "../room/client";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { taskSchema, type TaskView } from "../views/tasks";
import { rememberProjectOf } from "../db/task-projects";
import { EXTERNAL_PARENT_WARNING, parentTask, subtaskTrace } from "./subtasks";
import type { TaskSurface } from "./task-surface";
import { offloadFor } from "./task-access";
import { routingTarget } from "./task-assignment";

/** A request header a create reads (Idempotency-Key, read on every POST, is stated for all of them by the document). */
const TRACEPARENT = { traceparent: "W3C trace context kept on the task; a malformed one is ignored with a warning and the hub begins a trace" };

export function protocolWarnings(body: { structured_spec?: Record<string, unknown> | null; requirements?: Record<string, unknown> | null }) {
  const check = checkTaskProtocol(body);
  if (!check.ok) throw validationFailed(check.errors);
  return check.warnings;
}

/** The project a new task goes in: `project_id`, or the project of the creating session. */
async function projectOfNewTask(c: HubContext, body: { project_id?: string; session_id?: string | null }) {
  let sessionProject: string | undefined;
  if (body.session_id) {
    // The session is on its project's shard.
    const session = (
      await findOnShards(
        c.env,
        c.var.db,
        (db) => db.query.sessions.findFirst({ where: eq(sessions.id, body.session_id!) }),
        (s) => s.projectId,
      )
    )?.found;
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
  const parent = parentId ? await parentTask(c, project.id, parentId) : null;
  if (parentId && !parent) warnings.push(EXTERNAL_PARENT_WARNING);
  const traceparent = (parent ? subtaskTrace(parent, sent, warnings) : header) ?? beginTrace(sent.traceId).traceparent;
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
  if (result.unchanged || assignTo || view.status !== "pending" || !view.requirements) return { view, repeated: result.unchanged === true };
  return { view: await offeredByType(c, project.id, view), repeated: false };
}

/**
 * A task-format task routed by its type is auto-assigned as it is created, as the seed's auto-assign would; with no
 * server matching yet (or while people approve agents' tasks) it waits, and is offered again as servers come.
 */
async function offeredByType(c: HubContext, projectId: string, view: TaskView): Promise<TaskView> {
  try {
    const { result, view: assigned } = await runInRoomForView(c, projectId, { op: "auto_assign", taskId: view.id });
    return result.data?.status === "assigned" ? assigned : view;
  } catch (e) {
    if (e instanceof Problem) return view;
    throw e;
  }
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

/** POST / : a task, either kind. */
export function createRoute({ r, describe, write }: TaskSurface) {
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
        "Without `routing.target`, its `type` is the capability it needs (`requirements: {capabilities: [type]}`), and it is auto-assigned to a server offering it. " +
        "`observability.traceId` continues its trace unless a `traceparent` header came. `context.parentTaskId` naming no task of the project is kept as an " +
        "external reference, with a warning. A top-level field the seed does not name is kept in `extensions`, with a warning; a core create field (`spec`, ...) is refused by name.",
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
}
