/**
 * The agent side of a ProjectRoom's sockets: seeds/agent-orchestrator-messages.md
 * over a WebSocket. Requests are answered with response:success or
 * response:error correlated by id; events need no answer; what the hub has to
 * tell an agent arrives as notify:* messages.
 */
import { and, eq } from "drizzle-orm";
import { sha256Hex } from "../auth/secrets";
import { logError } from "../runtime/log";
import type { Db } from "../db/client";
import { servers, tasks } from "../db/schema";
import { serverCandidates } from "../db/server-candidates";
import { listTasks, taskViews } from "../db/task-queries";
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import { capabilityNames, rolesOf } from "../domain/matching";
import { zodFieldErrors } from "../protocol/field-errors";
import { FOREIGN_POINTER, pointerErrors } from "../datarefs/pointers";
import {
  agentMatches,
  baseMessage,
  DEFAULT_ASK_TIMEOUT_MS,
  eventPayloads,
  hubStatusesOf,
  priorityOf,
  REMEMBERED_REQUESTS,
  REQUEST_TIMEOUT_MS,
  requestFingerprintText,
  requestPayloads,
  requirementsOfSubmit,
  seedAgent,
  seedErrorOf,
  seedTask,
  withinDeadline,
  type EventType,
  type RequestType,
} from "../protocol/agent-orchestrator-messages";
import type { TaskView } from "../views/tasks";
import { newTask, type RoomActor, type RoomCommand, type RoomResult } from "./commands";
import { attachmentOf, CLOSE, FrameRate, sendJson, type AgentAttachment } from "./sockets";
import { failure, idReused, InvalidPayload, respondError, send, success, type Answer, type Message } from "./agent-answers";
import { rememberedAnswer } from "./agent-remembered";

export const RATE_LIMIT_PER_SECOND = 100;
export { DEFAULT_ASK_TIMEOUT_MS, REQUEST_TIMEOUT_MS };
/** How long a socket that has not sent its API key is kept. */
export const AUTH_GRACE_MS = 10_000;

/** What the agent protocol needs of its room. */
export interface AgentRoomPort {
  projectId: string;
  db: Db;
  /** Runs a write through the room's queue, as this agent. */
  run(actor: RoomActor, command: RoomCommand): Promise<RoomResult>;
  /** Adds fresh download URLs to the DataRef pointers in a value that point to this project's DataRefs. */
  withDownloadUrls(base: string, value: unknown): Promise<unknown>;
  /** Whether this key was revoked or replaced while the socket was authenticating. */
  keyRevoked(keyHash: string): Promise<boolean>;
  /** Presence: the server is here (a socket connected). */
  arrived(serverId: string, serverName: string): Promise<void>;
  /** Presence: a socket of the server left; it may have gone. */
  left(serverId: string, except: WebSocket): Promise<void>;
}

/** The task a message is about, when its payload names one as an id (nothing the agent wrote is logged). */
const taskIdIn = (payload: unknown) => {
  const taskId = (payload as { taskId?: unknown } | null)?.taskId;
  return typeof taskId === "string" && /^[0-9a-f-]{36}$/i.test(taskId) ? taskId : undefined;
};

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
    const message = baseMessage.safeParse(parsed);

    if (!attachment.serverId) {
      if (message.success && message.data.type === "auth") return this.authenticate(ws, attachment, (parsed as { api_key?: unknown }).api_key);
      respondError(ws, message.success ? message.data.id : null, "UNAUTHORIZED", 'Authenticate first: {"type":"auth","api_key":"orc_..."}');
      return ws.close(CLOSE.unauthorized, "authentication required");
    }
    if (attachment.closing) {
      // notify:shutdown announced a grace period: answers already under way still arrive, nothing new is done.
      return respondError(ws, message.success ? message.data.id : null, "UNAUTHORIZED", `This socket is shutting down: ${attachment.closing.reason}`, {
        closes_at: new Date(attachment.closing.at).toISOString(),
      });
    }
    if (this.rate.exceeded(ws)) {
      return respondError(ws, message.success ? message.data.id : null, "INVALID_REQUEST", `Rate limit: at most ${RATE_LIMIT_PER_SECOND} messages per second`, {
        limit: RATE_LIMIT_PER_SECOND,
      });
    }
    const deep = tooDeepUnder(parsed);
    if (deep !== null)
      return respondError(ws, message.success ? message.data.id : null, "INVALID_REQUEST", `${deep}: ${TOO_DEEP}`, [{ path: deep, message: TOO_DEEP }]);
    if (parsed === undefined) {
      // Non-JSON output is kept as a log line (the protocol's backward compatibility).
      await this.room.run(actorOf(attachment), { op: "agent_log", level: "info", message: text.slice(0, 20_000), context: null, taskId: null });
      return;
    }
    if (!message.success) return respondError(ws, null, "INVALID_REQUEST", "A message is a JSON object with a string type", zodFieldErrors(message.error));
    const m = message.data as Message;
    if (m.type === "auth") return sendJson(ws, { type: "auth_ok" });
    try {
      if (m.type in requestPayloads) return await this.onRequest(ws, attachment, m, m.type as RequestType);
      if (m.type in eventPayloads) return await this.onEvent(ws, attachment, m, m.type as EventType);
      respondError(ws, m.id, "INVALID_MESSAGE_TYPE", `Unknown message type ${JSON.stringify(m.type)}`);
    } catch (e) {
      logError("agent message failed", { project_id: this.room.projectId, task_id: taskIdIn(m.payload), operation: m.type, message_id: m.id ?? null }, e);
      respondError(ws, m.id, "INTERNAL_ERROR", "The hub could not handle this message; it has been logged");
    }
  }

  private async authenticate(ws: WebSocket, attachment: AgentAttachment, apiKey: unknown) {
    const keyHash = typeof apiKey === "string" ? await sha256Hex(apiKey) : null;
    const server = keyHash ? await this.room.db.query.servers.findFirst({ where: eq(servers.apiKeyHash, keyHash) }) : undefined;
    const project = await this.room.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, this.room.projectId), columns: { id: true } });
    const allowed = server && !server.revokedAt && project && (!server.projectIds || server.projectIds.includes(this.room.projectId));
    // Checked last: a revocation that reached the room while the lookups ran is seen here.
    if (!allowed || (await this.room.keyRevoked(keyHash!))) {
      respondError(ws, null, "UNAUTHORIZED", "The API key is invalid, revoked, or not allowed in this project");
      return ws.close(CLOSE.unauthorized, "authentication failed");
    }
    ws.serializeAttachment({ ...attachment, serverId: server!.id, serverName: server!.name, keyHash } satisfies AgentAttachment);
    sendJson(ws, { type: "auth_ok" });
    await this.connected(ws, server!.id, server!.name);
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
   * Answers a request within REQUEST_TIMEOUT_MS: a handler still running then
   * is answered TIMEOUT and its late answer is not sent (a remembered request
   * still records it, for a retry of the same id).
   */
  private async onRequest(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, REQUEST_TIMEOUT_MS);
    });
    try {
      const outcome = await withinDeadline(this.answerOnce(ws, a, m, type), deadline);
      if (outcome.done) send(ws, m.id, outcome.value);
      else respondError(ws, m.id, "TIMEOUT", `No answer within ${REQUEST_TIMEOUT_MS / 1000} s`, { timeout_ms: REQUEST_TIMEOUT_MS });
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
    if (!m.id || !REMEMBERED_REQUESTS.includes(type)) return this.answer(ws, a, m, type);
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
        const candidates = await serverCandidates(this.room.db, this.room.projectId);
        const running = await this.room.db
          .select({ id: tasks.id, server: tasks.assignedServerId })
          .from(tasks)
          .where(and(eq(tasks.projectId, this.room.projectId), eq(tasks.status, "running")));
        const agents = candidates
          .map((c) =>
            seedAgent({
              id: c.id,
              name: c.name,
              roles: rolesOf(c.capabilities),
              online: c.online,
              activeTasks: c.activeTasks,
              capabilities: c.capabilities ? capabilityNames(c.capabilities) : [],
              currentTask: running.find((t) => t.server === c.id)?.id ?? null,
            }),
          )
          .filter((x) => agentMatches(x, p));
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
        if (!m.id) return failure("INVALID_REQUEST", "ask-user needs an id to answer to");
        const expiresAt = new Date(Date.now() + (p.timeout ?? DEFAULT_ASK_TIMEOUT_MS)).toISOString();
        // The answer comes later: when a person responds, or TIMEOUT when expiresAt passes.
        return this.write(
          a,
          {
            op: "ask",
            question: p.question,
            context: null,
            options: p.options ?? null,
            taskId: p.taskId ?? null,
            waiting: { serverId: a.serverId!, correlationId: m.id, expiresAt },
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

  private async onEvent(ws: WebSocket, a: AgentAttachment, m: Message, type: EventType) {
    let p: Record<string, unknown>;
    try {
      await this.ownPointersOnly(m);
      p = this.payload(m, type);
    } catch (e) {
      if (e instanceof InvalidPayload) return send(ws, m.id, e.answer);
      throw e;
    }
    // Events need no answer; a refusal is answered all the same.
    const run = async (command: RoomCommand) => {
      const answer = await this.write(a, command, () => ({ type: "later" }));
      send(ws, m.id, answer);
    };
    switch (type) {
      case "event:progress":
        return run({ op: "progress", taskId: p.taskId as string, progress: p.progress as number, message: (p.message as string | undefined) ?? null });
      case "event:log":
        return run({ op: "agent_log", level: p.level as string, message: p.message as string, context: p.context ?? null, taskId: null });
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
