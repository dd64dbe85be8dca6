/**
 * The agent side of a ProjectRoom's sockets: seeds/agent-orchestrator-messages.md
 * over a WebSocket. Requests are answered with response:success or
 * response:error correlated by id; events need no answer; what the hub has to
 * tell an agent arrives as notify:* messages.
 */
import { logError } from "../runtime/log";
import { listTasks, taskViews } from "../views/task-queries";
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import { zodFieldErrors } from "../protocol/field-errors";
import { FOREIGN_POINTER, pointerErrors } from "../datarefs/pointers";
import {
  agentMatches,
  baseMessage,
  eventPayloads,
  type ErrorCode,
  hubStatusesOf,
  priorityOf,
  REMEMBERED_REQUESTS,
  requestFingerprintText,
  requestPayloads,
  requirementsOfSubmit,
  seedErrorOf,
  seedTask,
  withinDeadline,
  type EventType,
  type RequestType,
} from "../protocol/agent-orchestrator-messages";
import type { TaskView } from "../views/tasks";
import { newTask, type RoomActor, type RoomCommand, type RoomResult } from "./commands";
import { FrameRate } from "../http/websockets";
import { attachmentOf, CLOSE, type AgentAttachment } from "./sockets";
import { failure, idReused, InvalidPayload, respondError, send, success, type Answer, type Message } from "./agent-answers";
import { rememberedAnswer } from "./agent-remembered";
import { agentRoster } from "./agent-roster";
import { authenticate, redeclare, type AuthPort } from "./agent-auth";
import { markSeen } from "./agent-heartbeat";
import { idOf, logMessage, outcomeOf, taskIdIn, typeOf } from "./agent-message-log";

export const RATE_LIMIT_PER_SECOND = 100;
/** How long a socket that has not sent its API key is kept. */
export const AUTH_GRACE_MS = 10_000;

/** What the agent protocol needs of its room. */
export interface AgentRoomPort extends AuthPort {
  /** How long a request may take before it is answered TIMEOUT (AGENT_REQUEST_TIMEOUT_SECONDS). */
  requestTimeoutMs: number;
  /** Runs a write through the room's queue, as this agent. */
  run(actor: RoomActor, command: RoomCommand): Promise<RoomResult>;
  /** Adds fresh download URLs to the DataRef pointers in a value that point to this project's DataRefs. */
  withDownloadUrls(base: string, value: unknown): Promise<unknown>;
  /** Presence: the server is here (a socket connected). */
  arrived(serverId: string, serverName: string): Promise<void>;
  /** Presence: a socket of the server left; it may have gone. */
  left(serverId: string, except: WebSocket): Promise<void>;
}


const actorOf = (a: AgentAttachment): RoomActor => ({
  kind: "agent",
  serverId: a.serverId!,
  serverName: a.serverName!,
  label: `agent:${a.serverName}`,
  ...(a.keyHash ? { keyHash: a.keyHash } : {}),
});

/** The seed's "Agents can only query their own tasks": assigned to the agent's server, or created by it. */
const ownTask = (a: AgentAttachment, t: TaskView) => t.assigned_server_id === a.serverId || t.created_by === actorOf(a).label;

export class AgentProtocol {
  private readonly rate = new FrameRate(RATE_LIMIT_PER_SECOND);
  /** Remembered requests being handled, by server and id: a concurrent repeat waits for the first one's answer. */
  private readonly inFlight = new Map<string, { fingerprint: string; answer: Promise<Answer> }>();

  constructor(private readonly room: AgentRoomPort) {}

  forget(ws: WebSocket) {
    this.rate.forget(ws);
  }

  async onMessage(ws: WebSocket, raw: string | ArrayBuffer) {
    const attachment = attachmentOf(ws) as AgentAttachment;
    const text = typeof raw === "string" ? raw : new TextDecoder().decode(raw);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    // A refusal answers to whatever string id came, even when the message is otherwise malformed.
    const id = idOf(parsed);

    if (!attachment.serverId) {
      if (typeOf(parsed) === "auth") {
        const server = await authenticate(this.room, ws, attachment, parsed, id);
        if (server) await this.connected(ws, server.id, server.name);
        return;
      }
      respondError(ws, id, "UNAUTHORIZED", 'Authenticate first: {"type":"auth","api_key":"orc_..."}');
      return ws.close(CLOSE.unauthorized, "authentication required");
    }
    markSeen(ws);
    const started = performance.now();
    const done = (type: string | undefined, outcome: string, taskId?: string) =>
      logMessage(this.room.projectId, attachment, { type: type ?? "unknown", id, taskId, outcome, started });
    const refuse = (code: ErrorCode, message: string, details?: unknown) => {
      respondError(ws, id, code, message, details);
      done(typeOf(parsed), code);
    };
    // notify:shutdown announced a grace period: answers already under way still arrive, nothing new is done.
    if (attachment.closing)
      return refuse("UNAUTHORIZED", `This socket is shutting down: ${attachment.closing.reason}`, { closes_at: new Date(attachment.closing.at).toISOString() });
    if (this.rate.exceeded(ws)) return refuse("INVALID_REQUEST", `Rate limit: at most ${RATE_LIMIT_PER_SECOND} messages per second`, { limit: RATE_LIMIT_PER_SECOND });
    const deep = tooDeepUnder(parsed);
    if (deep !== null) return refuse("INVALID_REQUEST", `${deep}: ${TOO_DEEP}`, [{ path: deep, message: TOO_DEEP }]);
    if (parsed === undefined) {
      // Non-JSON output is kept as a log line (the protocol's backward compatibility).
      await this.room.run(actorOf(attachment), { op: "agent_log", level: "info", message: text.slice(0, 20_000), context: null, taskId: null });
      return done("output", "ok");
    }
    const message = baseMessage.safeParse(parsed);
    if (!message.success) {
      const errors = zodFieldErrors(message.error);
      return refuse("INVALID_REQUEST", `Invalid message: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`, errors);
    }
    const m = message.data as Message;
    if (m.type === "auth") return redeclare(this.room, ws, attachment, parsed, id);
    // An answer to the room's notify:ping: hearing it is all it is for.
    if (m.type === "pong") return;
    let outcome: string = "INVALID_MESSAGE_TYPE";
    try {
      if (m.type in requestPayloads) outcome = await this.onRequest(ws, attachment, m, m.type as RequestType);
      else if (m.type in eventPayloads) outcome = await this.onEvent(ws, attachment, m, m.type as EventType);
      else respondError(ws, m.id, "INVALID_MESSAGE_TYPE", `Unknown message type ${JSON.stringify(m.type)}`);
    } catch (e) {
      logError("agent message failed", { project_id: this.room.projectId, task_id: taskIdIn(m.payload), operation: m.type, message_id: m.id ?? null }, e);
      respondError(ws, m.id, "INTERNAL_ERROR", "The hub could not handle this message; it has been logged");
      outcome = "INTERNAL_ERROR";
    } finally {
      done(m.type, outcome, taskIdIn(m.payload));
    }
  }

  connected(_ws: WebSocket, serverId: string, serverName: string) {
    return this.room.arrived(serverId, serverName);
  }

  async disconnected(ws: WebSocket) {
    this.forget(ws);
    const a = attachmentOf(ws) as AgentAttachment | null;
    if (a?.serverId) await this.room.left(a.serverId, ws);
  }

  private payload<T extends RequestType | EventType>(m: Message, type: T): any {
    const schema = (type in requestPayloads ? requestPayloads[type as RequestType] : eventPayloads[type as EventType]) as (typeof requestPayloads)[RequestType];
    const parsed = schema.safeParse(m.payload ?? {});
    if (!parsed.success) throw new InvalidPayload(failure("INVALID_REQUEST", `Invalid payload for ${type}`, zodFieldErrors(parsed.error, "payload")));
    return parsed.data;
  }

  /** Refuses a message whose payload points to a DataRef outside this project (or to none), naming each pointer. */
  private async ownPointersOnly(m: Message) {
    const foreign = await pointerErrors(this.room.db, this.room.projectId, m.payload, ["payload"]);
    if (foreign.length > 0) throw new InvalidPayload(failure("INVALID_REQUEST", `${foreign.map((e) => e.path).join(", ")}: ${FOREIGN_POINTER}`, foreign));
  }

  /** Runs a room write: its answer, or the refusal in the seed's terms with the hub's problem in `details`. */
  private async write(a: AgentAttachment, command: RoomCommand, answer: (r: Extract<RoomResult, { ok: true }>) => Promise<Answer> | Answer): Promise<Answer> {
    const result = await this.room.run(actorOf(a), command);
    if (!result.ok) {
      const e = seedErrorOf(result.problem);
      return failure(e.code, e.message, e.details);
    }
    return answer(result);
  }

  /** Task data with DataRef download URLs, for the base URL the agent connected through. */
  private linked(ws: WebSocket, payload: unknown) {
    const base = (attachmentOf(ws) as AgentAttachment).hubBase;
    return base ? this.room.withDownloadUrls(base, payload) : Promise.resolve(payload);
  }

  private async taskHere(taskId: string) {
    const [view] = await taskViews(this.room.db, [taskId]);
    return view && view.project_id === this.room.projectId ? view : undefined;
  }

  /** One of the agent's own tasks, or undefined (another agent's task is not found, as a missing one). */
  private async ownTaskHere(a: AgentAttachment, taskId: string) {
    const view = isUuid(taskId) ? await this.taskHere(taskId) : undefined;
    return view && ownTask(a, view) ? view : undefined;
  }

  /**
   * Answers a request within the request timeout: a handler still running then
   * is answered TIMEOUT and its late answer is not sent (a remembered request
   * still records it, for a retry of the same id). Returns how it ended, for the log.
   */
  private async onRequest(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType): Promise<string> {
    const timeoutMs = this.room.requestTimeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    try {
      const outcome = await withinDeadline(this.answerOnce(ws, a, m, type), deadline);
      if (!outcome.done) {
        respondError(ws, m.id, "TIMEOUT", `No answer within ${timeoutMs / 1000} s`, { timeout_ms: timeoutMs });
        return "TIMEOUT";
      }
      send(ws, m.id, outcome.value);
      return outcomeOf(outcome.value);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A remembered request (one with an effect) repeated with an id already
   * answered — on this socket or another of the same server, before or after
   * a reconnect — gets the first answer and does nothing again; the same id
   * with another request is refused. Concurrent repeats wait for the first.
   */
  private answerOnce(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType): Promise<Answer> {
    if (!REMEMBERED_REQUESTS.includes(type)) return this.answer(ws, a, m, type);
    // Its answer, and a repeat's, are found by its id: without one an effect could happen twice unseen.
    if (!m.id)
      return Promise.resolve(
        failure("INVALID_REQUEST", `${type} needs a string id: its answer and any repeat are matched by it`, [
          { path: "id", message: `is required for ${type}` },
        ]),
      );
    const fingerprint = requestFingerprintText(type, m.payload);
    const key = `${a.serverId}\n${m.id}`;
    const running = this.inFlight.get(key);
    if (running) return running.fingerprint === fingerprint ? running.answer : Promise.resolve(idReused(m.id));
    const answer = rememberedAnswer(this.room, a, m, fingerprint, () => this.answer(ws, a, m, type)).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, { fingerprint, answer });
    return answer;
  }

  private async answer(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType): Promise<Answer> {
    try {
      await this.ownPointersOnly(m);
      return await this.handle(ws, a, m, type);
    } catch (e) {
      if (e instanceof InvalidPayload) return e.answer;
      throw e;
    }
  }

  private async handle(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType): Promise<Answer> {
    switch (type) {
      case "request:query-agents": {
        const p = this.payload(m, type) as { role?: string; status?: string; capabilities?: string[] };
        const agents = (await agentRoster(this.room.db, this.room.projectId)).filter((x) => agentMatches(x, p));
        return success({ agents });
      }
      case "request:query-tasks": {
        const p = this.payload(m, type) as { status?: string; requiredRole?: string; limit?: number };
        // An agent queries its own tasks (the protocol's authorization rule): assigned to it, or submitted by it.
        const page = await listTasks(this.room.db, {
          projectIds: [this.room.projectId],
          ownedBy: { serverId: a.serverId!, createdBy: actorOf(a).label },
          ...(p.status ? { statuses: hubStatusesOf[p.status] } : {}),
          ...(p.requiredRole ? { requiredRole: p.requiredRole } : {}),
          limit: p.limit ?? 50,
        });
        return success(await this.linked(ws, { tasks: page.tasks.map(seedTask) }));
      }
      case "request:submit-task": {
        const p = this.payload(m, type) as {
          type?: string;
          name: string;
          description?: string;
          payload?: unknown;
          requiredRole?: string;
          requiredCapabilities?: string[];
          dependencies?: string[];
          priority?: number | "low";
        };
        return this.write(
          a,
          {
            op: "create",
            task: newTask({
              title: p.name,
              spec: p.description ?? "",
              type: p.type ?? "feature",
              priority: priorityOf(p.priority),
              requirements: requirementsOfSubmit(p),
              // The task keeps its payload as sent (the description is its spec), and the trace the message names.
              origin: { ...(p.payload === undefined ? {} : { payload: p.payload }), ...(m.traceparent ? { traceparent: m.traceparent } : {}) },
            }),
            dependencies: (p.dependencies ?? []).map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" as const, contract_key: null })),
          },
          async (r) => success({ task: seedTask((await this.taskHere(r.taskId))!) }),
        );
      }
      case "request:get-task": {
        const p = this.payload(m, type) as { taskId: string };
        const task = await this.ownTaskHere(a, p.taskId);
        if (!task) return failure("NOT_FOUND", `No task ${p.taskId} of this agent in this project (agents reach only their own tasks)`);
        return success(await this.linked(ws, { task: seedTask(task) }));
      }
      case "request:ask-user": {
        const p = this.payload(m, type) as { question: string; options?: unknown[]; timeout?: number; taskId?: string };
        // Its id was checked with every request that has an effect (answerOnce).
        const expiresAt = new Date(Date.now() + (p.timeout ?? this.room.requestTimeoutMs)).toISOString();
        // The answer comes later: when a person responds, or TIMEOUT when expiresAt passes.
        return this.write(
          a,
          {
            op: "ask",
            question: p.question,
            context: null,
            options: p.options ?? null,
            taskId: p.taskId ?? null,
            waiting: { serverId: a.serverId!, correlationId: m.id!, expiresAt },
          },
          () => ({ type: "later" }),
        );
      }
      case "request:subscribe-task":
      case "request:unsubscribe-task": {
        const p = this.payload(m, type) as { taskId: string };
        if (type === "request:subscribe-task" && !(await this.ownTaskHere(a, p.taskId))) {
          return failure("NOT_FOUND", `No task ${p.taskId} of this agent in this project (agents reach only their own tasks)`);
        }
        const current = (attachmentOf(ws) as AgentAttachment).subscriptions;
        const subscriptions = type === "request:subscribe-task" ? [...new Set([...current, p.taskId])] : current.filter((id) => id !== p.taskId);
        ws.serializeAttachment({ ...(attachmentOf(ws) as AgentAttachment), subscriptions } satisfies AgentAttachment);
        return success({ subscriptions });
      }
    }
  }

  /** Handles an event; returns how it ended, for the log. */
  private async onEvent(ws: WebSocket, a: AgentAttachment, m: Message, type: EventType): Promise<string> {
    let p: Record<string, unknown>;
    try {
      await this.ownPointersOnly(m);
      p = this.payload(m, type);
    } catch (e) {
      if (!(e instanceof InvalidPayload)) throw e;
      send(ws, m.id, e.answer);
      return outcomeOf(e.answer);
    }
    // Events need no answer; a refusal is answered all the same.
    const run = async (command: RoomCommand) => {
      const answer = await this.write(a, command, () => ({ type: "later" }));
      send(ws, m.id, answer);
      return answer.type === "later" ? "ok" : outcomeOf(answer);
    };
    switch (type) {
      case "event:progress":
        return run({ op: "progress", taskId: p.taskId as string, progress: p.progress as number, message: (p.message as string | undefined) ?? null });
      case "event:log":
        return run({
          op: "agent_log",
          level: p.level as string,
          message: p.message as string,
          context: p.context ?? null,
          taskId: (p.taskId as string | undefined) ?? null,
        });
      case "event:error":
        return run({
          op: "agent_log",
          level: "error",
          message: p.error as string,
          context: { stack: p.stack ?? null, recoverable: p.recoverable ?? null },
          taskId: (p.taskId as string | undefined) ?? null,
        });
      case "event:question":
        return run({
          op: "ask",
          question: p.question as string,
          context: p.context ?? null,
          options: null,
          taskId: (p.taskId as string | undefined) ?? null,
          waiting: null,
        });
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isUuid = (id: string) => UUID.test(id);
