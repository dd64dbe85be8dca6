/**
 * A project as one A2A agent: the SDK's request handler answered with the hub's own tasks (no second store). A message
 * becomes a task created in the project's room and auto-assigned by capability (new-task.ts); a follow-up answers the
 * task's open question (or reviews its plan, or becomes a note); reads are the task rows (project-tasks.ts); streams
 * follow the room's events (task-streams.ts). Writes other than the create go through the REST routes as the caller,
 * so every rule and refusal is the REST API's.
 */
import type { Hono } from "hono";
import type { AgentCard, Message, StreamResponse, Task } from "@a2a-js/sdk";
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
import { PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { sha256Hex } from "../auth/secrets";
import { serverCandidates } from "../db/server-candidates";
import { countTasks, listTasks } from "../views/task-queries";
import type { ProjectRow } from "../db/client";
import { InvalidCursor } from "../domain/errors";
import type { HubContext, HubEnv } from "../http/context";
import { requestAs, type CallerHeaders } from "../http/internal-request";
import { agentCardOf } from "./card";
import { a2aErrorOf, problemText } from "./errors";
import { a2aTaskOf, checkMessage, contextIdOf, openQuestion, textOf } from "./messages";
import { createFromMessage } from "./new-task";
import { ProjectTasks } from "./project-tasks";
import { historyLengthOf, listParamsOf } from "./request-params";
import type { Listener } from "./room-events";
import { a2aStateOf, endsStream, isTerminal } from "./states";
import { follow, waitForRest, worthWaiting, type TaskWatch } from "./task-streams";

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

export class ProjectAgent implements A2ARequestHandler {
  private card: AgentCard | undefined;
  /** Aborted when the client goes: its streams stop waiting for the room. */
  private readonly gone = new AbortController();
  private readonly tasks: ProjectTasks;
  private readonly watch: TaskWatch;
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
    this.tasks = new ProjectTasks(c, project.id, project.shard);
    this.watch = { env: c.env, projectId: project.id, tasks: this.tasks, listener: caller.listener, gone: this.gone.signal };
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
    const historyLength = historyLengthOf(params.configuration?.historyLength);
    const { task, since } = await this.tasks.snapshot(await this.act(message));
    if (params.configuration?.returnImmediately || !worthWaiting(task)) return this.tasks.a2aTask(task, historyLength);
    await waitForRest(this.watch, task, since);
    return this.tasks.a2aTask(await this.tasks.read(task.id), historyLength);
  }

  async *sendMessageStream(params: SendMessageRequest, _context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const message = checkMessage(params.message);
    const historyLength = historyLengthOf(params.configuration?.historyLength);
    const { task, since } = await this.tasks.snapshot(await this.act(message));
    // A message's stream ends when the task finishes or waits for its client (spec 3.2.3).
    yield* follow(this.watch, task, since, endsStream, historyLength);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    const historyLength = historyLengthOf(params.historyLength);
    return this.tasks.a2aTask(await this.tasks.read(params.id), historyLength);
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    const { pageSize, historyLength, updatedAfter, statuses } = listParamsOf(params);
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
    const asked = await this.tasks.interventionsOf(page.tasks.map((t) => t.id));
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
    const task = await this.tasks.read(params.id);
    if (isTerminal(a2aStateOf(task.status))) throw new TaskNotCancelableError(`Task ${task.id} is ${task.status}: only an unfinished task can be canceled`);
    await this.rest("DELETE", `${this.tasksPath}/${task.id}`, undefined, { cancelling: true });
    return this.tasks.a2aTask(await this.tasks.read(task.id));
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { task, since } = await this.tasks.snapshot(params.id);
    if (isTerminal(a2aStateOf(task.status)))
      throw new UnsupportedOperationError(`Task ${task.id} is ${task.status}: a finished task has nothing more to stream (read it with GetTask)`);
    // A subscription follows the task through its questions too, until it finishes (spec 3.1.6).
    yield* follow(this.watch, task, since, isTerminal);
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
    return message.taskId ? this.followUp(message) : createFromMessage(this.c, this.project.id, message);
  }

  /**
   * A message naming a task: the answer to its open question, or the review of its plan; otherwise a note its agent
   * reads. A finished task takes no more messages; the same message again acts once.
   */
  private async followUp(message: Message): Promise<string> {
    const task = await this.tasks.read(message.taskId);
    if (isTerminal(a2aStateOf(task.status)))
      throw new UnsupportedOperationError(`Task ${task.id} is ${task.status}: a finished task takes no more messages (send one without taskId)`);
    if (message.contextId && message.contextId !== contextIdOf(task))
      throw new RequestMalformedError(`contextId ${message.contextId} is not the task's (${contextIdOf(task)})`);
    const text = textOf(message);
    if (!text) throw new RequestMalformedError("message.parts must hold a text part: the answer, the review or the note");
    const once = `a2a-${await sha256Hex(`${task.id}\n${message.messageId}`)}`;
    const question = task.status === "needs_human" ? openQuestion((await this.tasks.interventionsOf([task.id])).get(task.id) ?? []) : undefined;
    if (question) await this.rest("POST", `${this.interventionsPath}/${question.id}/respond`, { response: text }, { once });
    else if (task.status === "plan_review") {
      if (APPROVAL.test(text)) await this.rest("POST", `${this.tasksPath}/${task.id}/approve-plan`, {}, { once });
      else await this.rest("POST", `${this.tasksPath}/${task.id}/revise-plan`, { feedback: text }, { once });
    } else await this.rest("POST", `${this.tasksPath}/${task.id}/notes`, { content: text }, { once });
    return task.id;
  }
}
