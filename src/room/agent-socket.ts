/**
 * The agent side of a ProjectRoom's sockets: seeds/agent-orchestrator-messages.md
 * over a WebSocket. Requests are answered with response:success or
 * response:error correlated by id; events need no answer; what the hub has to
 * tell an agent arrives as notify:* messages.
 */
import { and, eq } from "drizzle-orm";
import { sha256Hex } from "../auth/secrets";
import { logError } from "../log";
import type { Db } from "../db/client";
import { servers, tasks } from "../db/schema";
import { serverCandidates } from "../db/server-candidates";
import { listTasks, taskViews } from "../db/task-queries";
import { zodFieldErrors } from "../protocol/field-errors";
import {
  baseMessage,
  eventPayloads,
  hubStatusesOf,
  priorityOf,
  requestPayloads,
  seedStatusOf,
  type ErrorCode,
  type EventType,
  type RequestType,
} from "../protocol/agent-orchestrator-messages";
import type { TaskView } from "../views/tasks";
import type { RoomActor, RoomCommand, RoomResult } from "./commands";
import { attachmentOf, CLOSE, FrameRate, sendJson, type AgentAttachment } from "./sockets";

export const RATE_LIMIT_PER_SECOND = 100;
export const DEFAULT_ASK_TIMEOUT_MS = 5 * 60_000;
/** How long a socket that has not sent its API key is kept. */
export const AUTH_GRACE_MS = 10_000;

/** What the agent protocol needs of its room. */
export interface AgentRoomPort {
  projectId: string;
  db: Db;
  /** Runs a write through the room's queue, as this agent. */
  run(actor: RoomActor, command: RoomCommand): Promise<RoomResult>;
  /** Adds fresh download URLs to the DataRef pointers in a value. */
  withDownloadUrls(base: string, value: unknown): Promise<unknown>;
  /** Whether this key was revoked or replaced while the socket was authenticating. */
  keyRevoked(keyHash: string): Promise<boolean>;
  /** Presence: the server is here (a socket connected). */
  arrived(serverId: string, serverName: string): Promise<void>;
  /** Presence: a socket of the server left; it may have gone. */
  left(serverId: string, except: WebSocket): Promise<void>;
}

interface Message {
  type: string;
  id?: string;
  payload?: unknown;
}

const stamp = () => new Date().toISOString();

export function respond(ws: WebSocket, correlationId: string | undefined, payload: unknown) {
  sendJson(ws, { type: "response:success", id: crypto.randomUUID(), correlationId: correlationId ?? null, timestamp: stamp(), payload });
}

export function respondError(ws: WebSocket, correlationId: string | undefined | null, code: ErrorCode, message: string, details?: unknown) {
  sendJson(ws, {
    type: "response:error",
    id: crypto.randomUUID(),
    correlationId: correlationId ?? null,
    timestamp: stamp(),
    error: { code, message, ...(details === undefined ? {} : { details }) },
  });
}

export const notify = (ws: WebSocket, type: string, payload: unknown) => sendJson(ws, { type, id: crypto.randomUUID(), timestamp: stamp(), payload });

const actorOf = (a: AgentAttachment): RoomActor => ({ kind: "agent", serverId: a.serverId!, serverName: a.serverName!, label: `agent:${a.serverName}` });

/** A task as the seed's messages show it. */
const seedTask = (t: TaskView) => ({
  id: t.id,
  name: t.title,
  description: t.spec,
  type: t.type,
  status: seedStatusOf(t.status),
  hub_status: t.status,
  priority: t.priority,
  requiredRole: "worker",
  dependencies: t.dependencies.map((d) => d.depends_on_task_id),
  assignedTo: t.assigned_server_name,
  progress: t.progress,
  result: t.result,
  resolved_inputs: t.resolved_inputs,
});

export class AgentProtocol {
  private readonly rate = new FrameRate(RATE_LIMIT_PER_SECOND);

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
    if (this.rate.exceeded(ws)) {
      return respondError(ws, message.success ? message.data.id : null, "INVALID_REQUEST", `Rate limit: at most ${RATE_LIMIT_PER_SECOND} messages per second`, {
        limit: RATE_LIMIT_PER_SECOND,
      });
    }
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
      logError("agent message failed", { project_id: this.room.projectId, message_type: m.type, message_id: m.id ?? null }, e);
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

  private payload<T extends RequestType | EventType>(ws: WebSocket, m: Message, type: T) {
    const schema = (type in requestPayloads ? requestPayloads[type as RequestType] : eventPayloads[type as EventType]) as (typeof requestPayloads)[RequestType];
    const parsed = schema.safeParse(m.payload ?? {});
    if (!parsed.success) {
      respondError(ws, m.id, "INVALID_REQUEST", `Invalid payload for ${type}`, zodFieldErrors(parsed.error, "payload"));
      return undefined;
    }
    return parsed.data as never;
  }

  /** Answers a room write: success, or the refusal mapped to the protocol's codes. */
  private async write(ws: WebSocket, m: Message, a: AgentAttachment, command: RoomCommand, answer?: (r: Extract<RoomResult, { ok: true }>) => unknown) {
    const result = await this.room.run(actorOf(a), command);
    if (!result.ok) {
      const code: ErrorCode = result.problem.status === 404 ? "NOT_FOUND" : result.problem.status === 403 ? "UNAUTHORIZED" : "INVALID_REQUEST";
      respondError(ws, m.id, code, result.problem.detail, result.problem.errors);
      return undefined;
    }
    if (answer) respond(ws, m.id, await answer(result));
    return result;
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

  private async onRequest(ws: WebSocket, a: AgentAttachment, m: Message, type: RequestType) {
    switch (type) {
      case "request:query-agents": {
        const p = this.payload(ws, m, type) as { role?: string; status?: string; capabilities?: string[] } | undefined;
        if (!p) return;
        const candidates = await serverCandidates(this.room.db, this.room.projectId);
        const running = await this.room.db
          .select({ id: tasks.id, server: tasks.assignedServerId })
          .from(tasks)
          .where(and(eq(tasks.projectId, this.room.projectId), eq(tasks.status, "running")));
        const agents = candidates
          .map((c) => ({
            id: c.id,
            name: c.name,
            role: "worker",
            status: !c.online ? "offline" : c.activeTasks > 0 ? "busy" : "idle",
            capabilities: [...new Set([...(c.capabilities?.languages ?? []), ...(c.capabilities?.tools ?? []), ...(c.capabilities?.tags ?? [])])],
            currentTask: running.find((t) => t.server === c.id)?.id ?? null,
          }))
          .filter((x) => (!p.role || p.role === x.role) && (!p.status || p.status === x.status) && (p.capabilities ?? []).every((cap) => x.capabilities.includes(cap)));
        return respond(ws, m.id, { agents });
      }
      case "request:query-tasks": {
        const p = this.payload(ws, m, type) as { status?: string; requiredRole?: string; limit?: number } | undefined;
        if (!p) return;
        // An agent queries its own tasks (the protocol's authorization rule).
        const page = await listTasks(this.room.db, {
          projectIds: [this.room.projectId],
          assignedServerId: a.serverId!,
          ...(p.status ? { statuses: hubStatusesOf[p.status] } : {}),
          limit: p.limit ?? 50,
        });
        const list = p.requiredRole && p.requiredRole !== "worker" ? [] : page.tasks.map(seedTask);
        return respond(ws, m.id, await this.linked(ws, { tasks: list }));
      }
      case "request:submit-task": {
        const p = this.payload(ws, m, type) as
          | { type?: string; name: string; description?: string; payload?: unknown; requiredCapabilities?: string[]; dependencies?: string[]; priority?: number | "low" }
          | undefined;
        if (!p) return;
        const spec = [p.description ?? "", p.payload === undefined ? "" : `Payload:\n${JSON.stringify(p.payload, null, 2)}`].filter(Boolean).join("\n\n");
        return this.write(
          ws,
          m,
          a,
          {
            op: "create",
            task: {
              title: p.name,
              spec,
              type: p.type ?? "feature",
              priority: priorityOf(p.priority),
              targetRepo: null,
              targetBranch: null,
              acceptanceCriteria: [],
              structuredSpec: null,
              requirements: p.requiredCapabilities?.length ? { tags: p.requiredCapabilities } : null,
              requirePlan: false,
              timeoutSeconds: null,
              sourceSessionId: null,
              warnings: [],
            },
            dependencies: (p.dependencies ?? []).map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" as const, contract_key: null })),
          },
          async (r) => ({ task: seedTask((await this.taskHere(r.taskId))!) }),
        );
      }
      case "request:get-task": {
        const p = this.payload(ws, m, type) as { taskId: string } | undefined;
        if (!p) return;
        const task = await this.taskHere(p.taskId);
        if (!task) return respondError(ws, m.id, "NOT_FOUND", `No task ${p.taskId} in this project`);
        return respond(ws, m.id, await this.linked(ws, { task: seedTask(task) }));
      }
      case "request:ask-user": {
        const p = this.payload(ws, m, type) as { question: string; options?: unknown[]; timeout?: number; taskId?: string } | undefined;
        if (!p) return;
        if (!m.id) return respondError(ws, null, "INVALID_REQUEST", "ask-user needs an id to answer to");
        const expiresAt = new Date(Date.now() + (p.timeout ?? DEFAULT_ASK_TIMEOUT_MS)).toISOString();
        // The answer comes later: when a person responds, or TIMEOUT when expiresAt passes.
        await this.write(ws, m, a, {
          op: "ask",
          question: p.question,
          context: null,
          options: p.options ?? null,
          taskId: p.taskId ?? null,
          waiting: { serverId: a.serverId!, correlationId: m.id, expiresAt },
        });
        return;
      }
      case "request:subscribe-task":
      case "request:unsubscribe-task": {
        const p = this.payload(ws, m, type) as { taskId: string } | undefined;
        if (!p) return;
        if (!(await this.room.db.query.tasks.findFirst({ where: and(eq(tasks.id, p.taskId), eq(tasks.projectId, this.room.projectId)), columns: { id: true } }))) {
          return respondError(ws, m.id, "NOT_FOUND", `No task ${p.taskId} in this project`);
        }
        const current = (attachmentOf(ws) as AgentAttachment).subscriptions;
        const subscriptions = type === "request:subscribe-task" ? [...new Set([...current, p.taskId])] : current.filter((id) => id !== p.taskId);
        ws.serializeAttachment({ ...(attachmentOf(ws) as AgentAttachment), subscriptions } satisfies AgentAttachment);
        return respond(ws, m.id, { subscriptions });
      }
    }
  }

  private async onEvent(ws: WebSocket, a: AgentAttachment, m: Message, type: EventType) {
    const p = this.payload(ws, m, type) as Record<string, unknown> | undefined;
    if (!p) return;
    switch (type) {
      case "event:progress":
        await this.write(ws, m, a, { op: "progress", taskId: p.taskId as string, progress: p.progress as number, message: (p.message as string | undefined) ?? null });
        return;
      case "event:log":
        await this.write(ws, m, a, { op: "agent_log", level: p.level as string, message: p.message as string, context: p.context ?? null, taskId: null });
        return;
      case "event:error":
        await this.write(ws, m, a, {
          op: "agent_log",
          level: "error",
          message: p.error as string,
          context: { stack: p.stack ?? null, recoverable: p.recoverable ?? null },
          taskId: (p.taskId as string | undefined) ?? null,
        });
        return;
      case "event:question":
        await this.write(ws, m, a, { op: "ask", question: p.question as string, context: p.context ?? null, options: null, taskId: (p.taskId as string | undefined) ?? null, waiting: null });
        return;
    }
  }
}
