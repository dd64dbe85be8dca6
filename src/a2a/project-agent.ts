/**
 * A project as one A2A agent: the SDK's request handler answered with the hub's own tasks (no second store). A message
 * becomes a task created in the project's room and auto-assigned by capability; a follow-up answers the task's open
 * question (or reviews its plan, or becomes a note); reads are the task rows; streams follow the room's events. Writes
 * other than the create go through the REST routes as the caller, so every rule and refusal is the REST API's.
 */
import type { Hono } from "hono";
import { asc, inArray } from "drizzle-orm";
import { AgentCard, TaskState, type Message, type StreamResponse, type Task } from "@a2a-js/sdk";
import type { A2ARequestHandler, ServerCallContext } from "@a2a-js/sdk/server";
import type {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
  ListTaskPushNotificationConfigsResponse,
} from "@a2a-js/sdk";
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import { sha256Hex } from "../auth/secrets";
import { linkPointers, pointerErrors } from "../datarefs/pointers";
import { canonicalJson } from "../domain/canonical-json";
import { hubBaseUrl } from "../http/base-url";
import { visibilityOf } from "../middleware/dataref-links";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { offloadFor } from "../routes/task-access";
import { interventions } from "../db/schema";
import { serverCandidates } from "../db/server-candidates";
import { countTasks, listTasks, taskViews } from "../views/task-queries";
import type { ProjectRow } from "../db/client";
import { InvalidCursor } from "../domain/errors";
import type { TaskStatus } from "../domain/lifecycle";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { Problem } from "../http/problem";
import { requestAs, type CallerHeaders } from "../mcp/dispatch";
import { checkTaskProtocol } from "../protocol/hub-api";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";
import { newTask } from "../room/commands";
import { runInRoom, runInRoomForView } from "../room/client";
import type { InterventionRow, TaskView } from "../views/tasks";
import { agentCardOf } from "./card";
import { a2aTaskOf, artifactsOf, checkMessage, contextIdOf, openQuestion, statusOf, taskFieldsOf, textOf } from "./messages";
import { eventsAfter, snapshotOf, type Listener } from "./room-events";
import { a2aStateOf, endsStream, isTerminal, statusesOf } from "./states";

/** How long a blocking SendMessage waits for its task to finish or ask something (A2A_BLOCKING_WAIT_SECONDS); then it answers the task as it is. */
const DEFAULT_BLOCKING_WAIT_SECONDS = 25;
const DEFAULT_PAGE_SIZE = 50;
/** A date and a time, as ISO 8601 writes them (Date.parse alone takes "-1" for a year). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const MAX_PAGE_SIZE = 100;
/** A follow-up that approves a plan under review; any other text asks for changes. */
const APPROVAL = /^\s*(approve|approved|yes|lgtm|ok)\s*[.!]*\s*$/i;

/** Who calls, as the A2A route authenticated them. */
export interface A2ACaller {
  audience: "agent" | "person";
  /** The credentials its REST requests carry. */
  headers: CallerHeaders;
  /** Whom the room's socket is opened as for its streams. */
  listener: Listener;
}

/** A refusal of a hub route, in A2A's words. */
export function a2aErrorOf(status: number, detail: string, cancelling = false, code?: string): Error {
  if (code === "TASK_ID_TAKEN") return new RequestMalformedError(`message.messageId already names another message of this project: ${detail}`);
  if (status === 404) return new TaskNotFoundError(detail);
  if (status === 409 && cancelling) return new TaskNotCancelableError(detail);
  if (status === 400 || status === 413 || status === 422) return new RequestMalformedError(detail);
  if (status < 500) return new UnsupportedOperationError(detail);
  return new Error(detail);
}

type FieldErrors = readonly { path: string; message: string }[];
/** Field errors in one line of an A2A error's message. */
const fieldsText = (errors: FieldErrors) => errors.map((e) => `${e.path}: ${e.message}`).join("; ");
const problemText = (p: { detail?: string; errors?: FieldErrors }) => [p.detail ?? "refused", ...(p.errors?.length ? [fieldsText(p.errors)] : [])].join("; ");

/** Runs hub work, answering its refusals as A2A errors. */
async function asA2A<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof Problem) throw a2aErrorOf(e.status, problemText(e), false, e.code);
    throw e;
  }
}

export class ProjectAgent implements A2ARequestHandler {
  private card: AgentCard | undefined;
  /** Aborted when the client goes: its streams stop waiting for the room. */
  private readonly gone = new AbortController();
  private readonly tasksPath: string;
  private readonly interventionsPath: string;

  constructor(
    private readonly app: Hono<HubEnv>,
    private readonly c: HubContext,
    private readonly project: ProjectRow,
    private readonly endpoint: string,
    private readonly caller: A2ACaller,
  ) {
    const surface = caller.audience === "person" ? "/api/v1" : "/api/v1/server";
    this.tasksPath = `${surface}/tasks`;
    this.interventionsPath = `${surface}/interventions`;
  }

  /** The client went away: every stream of this request lets go of the room. */
  stop() {
    this.gone.abort();
  }

  async getAgentCard(): Promise<AgentCard> {
    this.card ??= agentCardOf(this.project, this.endpoint, await serverCandidates(this.c.var.db, this.project.id));
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new UnsupportedOperationError("This agent has no extended card: its card is already shown only to callers who may see the project");
  }

  async sendMessage(params: SendMessageRequest, _context: ServerCallContext): Promise<Message | Task> {
    const message = checkMessage(params.message);
    const historyLength = this.historyLength(params.configuration?.historyLength);
    const { task, since } = await this.snapshot(await this.act(message));
    if (params.configuration?.returnImmediately || !this.worthWaiting(task)) return this.a2aTask(task, historyLength);
    await this.waitForRest(task, since);
    return this.a2aTask(await this.read(task.id), historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const message = checkMessage(params.message);
    const historyLength = this.historyLength(params.configuration?.historyLength);
    const { task, since } = await this.snapshot(await this.act(message));
    // A message's stream ends when the task finishes or waits for its client (spec 3.2.3).
    yield* this.follow(task, since, endsStream, historyLength);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    const historyLength = this.historyLength(params.historyLength);
    return this.a2aTask(await this.read(params.id), historyLength);
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE)
      throw new RequestMalformedError(`pageSize must be between 1 and ${MAX_PAGE_SIZE}`);
    const historyLength = this.historyLength(params.historyLength);
    let updatedAfter: string | undefined;
    if (params.statusTimestampAfter) {
      const at = ISO_TIME.test(params.statusTimestampAfter) ? Date.parse(params.statusTimestampAfter) : NaN;
      if (Number.isNaN(at)) throw new RequestMalformedError("statusTimestampAfter must be an ISO-8601 time (2026-01-31T12:00:00Z)");
      updatedAfter = new Date(at).toISOString();
    }
    if (!(params.status in TaskState) || params.status === TaskState.UNRECOGNIZED)
      throw new RequestMalformedError(
        `status must be one of ${Object.keys(TaskState)
          .filter((k) => k.startsWith("TASK_STATE_"))
          .join(", ")}`,
      );
    const statuses = params.status === TaskState.TASK_STATE_UNSPECIFIED ? undefined : statusesOf(params.status);
    if (statuses?.length === 0) return { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 };
    const filter = { projectIds: [this.project.id], statuses, conversationId: params.contextId || undefined, updatedAfter };
    let page;
    try {
      // Newest status first (spec 3.1.4): a task's status time is when it last changed.
      page = await listTasks(this.c.var.db, { ...filter, newestBy: "updated", limit: pageSize, cursor: params.pageToken || undefined });
    } catch (e) {
      if (e instanceof InvalidCursor) throw new RequestMalformedError("pageToken is not one this agent gave (send a ListTasks answer's nextPageToken)");
      throw e;
    }
    const asked = await this.interventionsOf(page.tasks.map((t) => t.id));
    const tasks = page.tasks.map((t) => a2aTaskOf(t, asked.get(t.id) ?? [], historyLength));
    return {
      // Artifacts only when asked for (the spec: omitted by default, as a list is an overview).
      tasks: params.includeArtifacts ? tasks : tasks.map((t) => ({ ...t, artifacts: [] })),
      nextPageToken: page.next_cursor ?? "",
      pageSize: tasks.length,
      totalSize: await countTasks(this.c.var.db, filter),
    };
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    const task = await this.read(params.id);
    if (isTerminal(a2aStateOf(task.status))) throw new TaskNotCancelableError(`Task ${task.id} is ${task.status}: only an unfinished task can be canceled`);
    await this.rest("DELETE", `${this.tasksPath}/${task.id}`, undefined, { cancelling: true });
    return this.a2aTask(await this.read(task.id));
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { task, since } = await this.snapshot(params.id);
    if (isTerminal(a2aStateOf(task.status)))
      throw new UnsupportedOperationError(`Task ${task.id} is ${task.status}: a finished task has nothing more to stream (read it with GetTask)`);
    // A subscription follows the task through its questions too, until it finishes (spec 3.1.6).
    yield* this.follow(task, since, isTerminal);
  }

  // Push notifications: the project's Standard Webhooks endpoints deliver its events instead.
  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError();
  }
  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError();
  }
  async listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    throw new PushNotificationNotSupportedError();
  }
  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw new PushNotificationNotSupportedError();
  }

  // ── the hub's side ────────────────────────────────────────────────────────

  private historyLength(n: number | undefined) {
    if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new RequestMalformedError("historyLength must be a non-negative integer");
    return n;
  }

  /** A task of this project (any other id is not found here). */
  private async read(id: string | undefined): Promise<TaskView> {
    return this.ofProject(id, isUuid(id ?? "") ? (await taskViews(this.c.var.db, [id!]))[0] : undefined);
  }

  /** A task of this project and the seq after which the room's events change it (room-events.ts snapshotOf). */
  private async snapshot(id: string | undefined): Promise<{ task: TaskView; since: number }> {
    if (!isUuid(id ?? "")) return { task: this.ofProject(id, undefined), since: 0 };
    const { task, since } = await snapshotOf(this.c.var.db, this.c.env.DB, this.project.id, id!);
    return { task: this.ofProject(id, task), since };
  }

  private ofProject(id: string | undefined, task: TaskView | undefined): TaskView {
    if (!id) throw new RequestMalformedError("id is required: the task's id");
    if (!task || task.project_id !== this.project.id) throw new TaskNotFoundError(`Task not found: ${id}`);
    return task;
  }

  private async interventionsOf(taskIds: string[]): Promise<Map<string, InterventionRow[]>> {
    const byTask = new Map<string, InterventionRow[]>();
    if (taskIds.length === 0) return byTask;
    const rows = await this.c.var.db
      .select()
      .from(interventions)
      .where(inArray(interventions.taskId, taskIds))
      .orderBy(asc(interventions.createdAt), asc(interventions.id));
    for (const row of rows) byTask.set(row.taskId!, [...(byTask.get(row.taskId!) ?? []), row]);
    return byTask;
  }

  private async a2aTask(task: TaskView, historyLength?: number): Promise<Task> {
    return a2aTaskOf(await this.linked(task), (await this.interventionsOf([task.id])).get(task.id) ?? [], historyLength);
  }

  /** The task with a download URL in each DataRef pointer of its result the caller may see, as the REST API answers it. */
  private async linked(task: TaskView): Promise<TaskView> {
    if (!task.result) return task;
    const scope = { project: this.project.id, visibility: visibilityOf(this.c) };
    return { ...task, result: (await linkPointers(this.c.env, this.c.var.db, hubBaseUrl(this.c), task.result, scope)) as TaskView["result"] };
  }

  /**
   * A REST route called as the caller; a refusal becomes A2A's error. `once`: an Idempotency-Key, so that a message
   * sent again (a client's retry) is answered as the first one was instead of acting twice.
   */
  private async rest(method: string, path: string, body?: unknown, { cancelling = false, once }: { cancelling?: boolean; once?: string } = {}) {
    const headers = once ? { ...this.caller.headers, "Idempotency-Key": once } : this.caller.headers;
    const answer = await requestAs(this.app, this.c, headers, method, path, undefined, body);
    const code = (answer.body as { code?: string } | null)?.code;
    // The key was spent by the first of these messages (on whichever route the task's state then chose): done already.
    if (once && (code === "IDEMPOTENCY_KEY_REUSED" || code === "IDEMPOTENCY_KEY_IN_FLIGHT")) return null;
    if (answer.status >= 400) throw a2aErrorOf(answer.status, problemText(answer.body as { detail?: string }), cancelling, code);
    return answer.body;
  }

  /** What a message does: a follow-up to the task it names, or a new task. Answers the task's id. */
  private act(message: Message): Promise<string> {
    return message.taskId ? this.followUp(message) : this.create(message);
  }

  /**
   * A new task from the message, in the project's room, then offered to the best-matching agent. The message's id is
   * the task's client id: the same message sent again answers the same task; other content under that id is refused.
   */
  private async create(message: Message): Promise<string> {
    const fields = taskFieldsOf(message);
    const check = checkTaskProtocol({ structured_spec: fields.structuredSpec, requirements: fields.requirements });
    if (!check.ok) throw new RequestMalformedError(`the message's data parts: ${fieldsText(check.errors)}`);
    // A DataRef pointer in a message must name one of the project's, as in any body the REST API takes.
    const foreign = await pointerErrors(this.c.var.db, this.project.id, fields.payload, ["message"]);
    if (foreign.length) throw new RequestMalformedError(fieldsText(foreign));
    const traceparent = parseTraceparent(this.c.req.header("traceparent"))?.traceparent ?? beginTrace().traceparent;
    const clientRequestHash = await sha256Hex(canonicalJson(fields.payload));
    const structuredSpec = (await offloadFor(this.c, this.project.id)(fields.structuredSpec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | null;
    const { result, view } = await asA2A(() =>
      runInRoomForView(this.c, this.project.id, {
        op: "create",
        task: newTask({
          title: fields.title,
          spec: fields.spec,
          type: "feature",
          priority: "normal",
          structuredSpec: structuredSpec ?? null,
          requirements: fields.requirements,
          warnings: check.warnings,
          origin: {
            clientId: message.messageId,
            clientRequestHash,
            payload: fields.payload,
            context: { conversationId: message.contextId || crypto.randomUUID() },
            routing: { source: "a2a" },
            traceparent,
          },
        }),
        dependencies: [],
      }),
    );
    if (result.unchanged || view.status !== "pending") return view.id;
    try {
      await runInRoom(this.c, this.project.id, { op: "auto_assign", taskId: view.id });
    } catch (e) {
      // No agent matches yet, or people approve agents' tasks first: the task waits, submitted, for the hub's next offer.
      if (!(e instanceof Problem)) throw e;
    }
    return view.id;
  }

  /**
   * A message naming a task: the answer to its open question, or the review of its plan; otherwise a note its agent
   * reads. A finished task takes no more messages; the same message again acts once.
   */
  private async followUp(message: Message): Promise<string> {
    const task = await this.read(message.taskId);
    if (isTerminal(a2aStateOf(task.status)))
      throw new UnsupportedOperationError(`Task ${task.id} is ${task.status}: a finished task takes no more messages (send one without taskId)`);
    if (message.contextId && message.contextId !== contextIdOf(task))
      throw new RequestMalformedError(`contextId ${message.contextId} is not the task's (${contextIdOf(task)})`);
    const text = textOf(message);
    if (!text) throw new RequestMalformedError("message.parts must hold a text part: the answer, the review or the note");
    const once = `a2a-${await sha256Hex(`${task.id}\n${message.messageId}`)}`;
    const question = task.status === "needs_human" ? openQuestion((await this.interventionsOf([task.id])).get(task.id) ?? []) : undefined;
    if (question) await this.rest("POST", `${this.interventionsPath}/${question.id}/respond`, { response: text }, { once });
    else if (task.status === "plan_review") {
      if (APPROVAL.test(text)) await this.rest("POST", `${this.tasksPath}/${task.id}/approve-plan`, {}, { once });
      else await this.rest("POST", `${this.tasksPath}/${task.id}/revise-plan`, { feedback: text }, { once });
    } else await this.rest("POST", `${this.tasksPath}/${task.id}/notes`, { content: text }, { once });
    return task.id;
  }

  /** A blocking send waits only for a task an agent has: one nobody took yet has nothing to wait for. */
  private worthWaiting(task: TaskView) {
    return task.assigned_server_id !== null && !endsStream(a2aStateOf(task.status));
  }

  /** Waits (at most A2A_BLOCKING_WAIT_SECONDS) until the task finishes or asks something. */
  private async waitForRest(task: TaskView, since: number) {
    const done = new AbortController();
    const events = eventsAfter(this.c.env, this.project.id, since, this.caller.listener, AbortSignal.any([done.signal, this.gone.signal]));
    const deadline = Date.now() + (Number(this.c.env.A2A_BLOCKING_WAIT_SECONDS) || DEFAULT_BLOCKING_WAIT_SECONDS) * 1000;
    try {
      for (;;) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()))));
        const next = await Promise.race([events.next(), timeout]);
        clearTimeout(timer);
        if (next === "timeout" || next.done) return;
        const e = next.value;
        if (e.resynced || (e.task_id === task.id && typeof e.data.status === "string" && endsStream(a2aStateOf(e.data.status as TaskStatus)))) return;
      }
    } finally {
      // Let go of a read still waiting (after the timeout), so that closing the socket does not wait for an event.
      done.abort();
      await events.return(undefined);
    }
  }

  /**
   * The task now, then each change of its A2A state as the room's events show it (after `since`), in order and once:
   * a finished task's artifacts, then its status. Ends at a state `endsAt` names.
   */
  private async *follow(
    task: TaskView,
    since: number,
    endsAt: (state: TaskState) => boolean,
    historyLength?: number,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const first = await this.a2aTask(task, historyLength);
    yield { payload: { $case: "task", value: first } };
    let state = first.status!.state;
    if (endsAt(state)) return;
    for await (const event of eventsAfter(this.c.env, this.project.id, since, this.caller.listener, this.gone.signal)) {
      const isStatus = event.task_id === task.id && typeof event.data.status === "string";
      if (!isStatus && !event.resynced) continue;
      const fresh = await this.linked(await this.read(task.id));
      // An event's own status says what the task became then; after a resync only the task as it is now is known.
      const next = a2aStateOf(isStatus ? (event.data.status as TaskStatus) : fresh.status);
      if (next === state) continue;
      state = next;
      const asked = (await this.interventionsOf([task.id])).get(task.id) ?? [];
      const now = statusOf(fresh, asked);
      const ids = { taskId: task.id, contextId: contextIdOf(fresh), metadata: undefined };
      if (state === TaskState.TASK_STATE_COMPLETED)
        for (const artifact of artifactsOf(fresh)) yield { payload: { $case: "artifactUpdate", value: { ...ids, artifact, append: false, lastChunk: true } } };
      const status = { state, message: now.state === state ? now.message : undefined, timestamp: event.created_at || now.timestamp };
      yield { payload: { $case: "statusUpdate", value: { ...ids, status } } };
      if (endsAt(state)) return;
    }
  }
}
