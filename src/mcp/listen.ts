/**
 * `subscriptions/listen` (2026-07-28) on any isolate: the stream is made of the rooms' events, not of the SDK's
 * in-process bus, which neither knows the hub's tasks nor checks who may hear of what. Each resource and task asked
 * for is read first as the caller (one it cannot see is left out of the acknowledgement); then the room of each
 * project involved is followed as the caller, so a person removed from a project stops hearing of it, and every
 * event after the acknowledgement is told once, in the project's order.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { ProtocolErrorCode, SUBSCRIPTION_ID_META_KEY, type JSONRPCRequest } from "@modelcontextprotocol/server";
import { eventsAfter, type Listener } from "../a2a/room-events";
import { homeD1 } from "../db/shards";
import type { HubEnv } from "../http/context";
import type { McpRequest } from "./dispatch";
import { readResource, resourceOf } from "./resources";
import { answersForms, capabilitiesIn, declaresTasks, hubTasks } from "./tasks";
import { detailedTaskOf } from "./task-view";

/** At most this many resources and tasks in one subscription, over at most MAX_PROJECTS projects' rooms. */
const MAX_ITEMS = 64;
const MAX_PROJECTS = 8;
const KEEP_ALIVE_MS = 15_000;

const FILTER = z.looseObject({
  notifications: z.looseObject({
    resourceSubscriptions: z.array(z.string()).max(MAX_ITEMS).optional(),
    taskIds: z.array(z.string()).max(MAX_ITEMS).optional(),
  }),
});

/** What a subscription follows in one project: task URIs by task id, whether its board is followed, and task ids. */
interface Followed {
  uris: Map<string, string[]>;
  board: string | null;
  tasks: Set<string>;
}

const rpcError = (id: JSONRPCRequest["id"], code: number, message: string) => Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status: 200 });

export async function listen(app: Hono<HubEnv>, request: McpRequest, listener: Listener, message: JSONRPCRequest): Promise<Response> {
  const parsed = FILTER.safeParse(message.params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return rpcError(message.id, ProtocolErrorCode.InvalidParams, `${issue?.path.join(".") || "params"}: ${issue?.message ?? "invalid"}`);
  }
  const capabilities = capabilitiesIn((message.params?._meta ?? {}) as Record<string, unknown>);
  const { resourceSubscriptions = [], taskIds = [] } = parsed.data.notifications;
  const hub = hubTasks(app, request);

  // Reading each one is the access check; what cannot be read is simply not honoured.
  const byProject = new Map<string, Followed>();
  const followedIn = (projectId: string) => {
    let f = byProject.get(projectId);
    if (!f && byProject.size < MAX_PROJECTS) byProject.set(projectId, (f = { uris: new Map(), board: null, tasks: new Set() }));
    return f;
  };
  const honoured = { resourceSubscriptions: [] as string[], taskIds: [] as string[] };
  for (const uri of new Set(resourceSubscriptions)) {
    const ref = resourceOf(uri);
    const read = ref && (await readResource(app, request.c, request.caller, uri).catch(() => undefined));
    const followed = read && followedIn((JSON.parse(read.text) as { project_id: string }).project_id);
    if (!ref || !followed) continue;
    if (ref.kind === "board") followed.board = uri;
    else followed.uris.set(ref.taskId, [...(followed.uris.get(ref.taskId) ?? []), uri]);
    honoured.resourceSubscriptions.push(uri);
  }
  if (declaresTasks(capabilities))
    for (const id of new Set(taskIds)) {
      const read = await hub.read(id).catch(() => undefined);
      const followed = read && followedIn(read.task.project_id);
      if (!followed) continue;
      followed.tasks.add(read.task.id);
      honoured.taskIds.push(read.task.id);
    }

  const heads = await Promise.all([...byProject.keys()].map(async (projectId) => [projectId, await headOf(request.c.env, projectId)] as const));
  const meta = { [SUBSCRIPTION_ID_META_KEY]: message.id };
  const frame = (body: Record<string, unknown>) => `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...body })}\n\n`;
  const gone = new AbortController();
  // Set when the client went or the subscription ended: nothing more is written, and the stream is not closed twice.
  let done = false;
  const encoder = new TextEncoder();
  let keepAlive: ReturnType<typeof setInterval> | undefined;

  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (text: string) => {
        if (!done) controller.enqueue(encoder.encode(text));
      };
      const notify = (method: string, params: Record<string, unknown>) => write(frame({ method, params: { ...params, _meta: meta } }));
      write(frame({ method: "notifications/subscriptions/acknowledged", params: { notifications: honoured, _meta: meta } }));
      keepAlive = setInterval(() => write(": keep-alive\n\n"), KEEP_ALIVE_MS);

      /** The last state told of each task, so that an event changing nothing the client sees tells it nothing. */
      const told = new Map<string, string>();
      async function tellTask(taskId: string) {
        const read = await hub.read(taskId).catch(() => undefined);
        // The caller may no longer read it (its credentials lapsed or were revoked, the task is gone): the subscription
        // ends, and listening again checks everything anew.
        if (!read) return gone.abort();
        const detail = detailedTaskOf(read.task, read.questions, answersForms(capabilities));
        const key = JSON.stringify(detail);
        if (told.get(taskId) === key) return;
        told.set(taskId, key);
        notify("notifications/tasks", detail);
      }

      async function follow(projectId: string, since: number) {
        const followed = byProject.get(projectId)!;
        for await (const event of eventsAfter(request.c.env, projectId, since, listener, gone.signal)) {
          // A resync names no task: everything followed in the project may have changed.
          const touched = event.resynced ? [...new Set([...followed.uris.keys(), ...followed.tasks])] : event.task_id ? [event.task_id] : [];
          if (followed.board && (event.resynced || event.task_id)) notify("notifications/resources/updated", { uri: followed.board });
          for (const taskId of touched) {
            for (const uri of followed.uris.get(taskId) ?? []) notify("notifications/resources/updated", { uri });
            if (followed.tasks.has(taskId)) await tellTask(taskId);
          }
        }
      }

      try {
        // A subscription that follows none of the hub's things (list changes only, which never happen here) stays open
        // until its client goes or its time is up, as a followed room's would.
        const idle = heads.length ? [] : [untilGoneOr(listener.expiresAt, gone.signal)];
        // One room ending (access lost, the room refusing) ends the subscription: the others let go of theirs at once.
        await Promise.race([...heads.map(([projectId, since]) => follow(projectId, since)), ...idle]).catch(() => undefined);
      } finally {
        clearInterval(keepAlive);
        // The subscription ends gracefully (the caller's access ended or lapsed, or a room closed); the client may listen again.
        const open = !done;
        write(frame({ id: message.id, result: { _meta: meta } }));
        done = true;
        gone.abort();
        if (open) controller.close();
      }
    },
    cancel() {
      done = true;
      clearInterval(keepAlive);
      gone.abort();
    },
  });
  return new Response(body, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
}

const untilGoneOr = (expiresAt: number, gone: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, expiresAt - Date.now()));
    gone.addEventListener("abort", () => (clearTimeout(timer), resolve()));
  });

/** The newest seq of a project's log: the stream tells of what happens after it. */
async function headOf(env: HubEnv["Bindings"], projectId: string) {
  const d1 = await homeD1(env, projectId);
  const row = await d1.prepare("SELECT COALESCE(MAX(seq), 0) AS head FROM events WHERE project_id = ?1").bind(projectId).first<{ head: number }>();
  return row?.head ?? 0;
}
