/**
 * MCP's Tasks extension on the 2026-07-28 leg: tasks/get, tasks/update and tasks/cancel over the hub's own tasks, each
 * made of REST requests as the caller (dispatch.ts), so a task the caller cannot see is unknown here as it is there,
 * and an answer or a cancel obeys every rule the REST API has. The shapes are task-view.ts's.
 */
import type { Hono } from "hono";
import { z } from "zod";
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { FINISHED } from "../domain/lifecycle";
import type { HubEnv } from "../http/context";
import { requestAs, type RouteAnswer } from "../http/internal-request";
import type { McpRequest } from "./dispatch";
import { detailedTaskOf, planKey, TASKS_EXTENSION, type HubQuestion, type HubTask } from "./task-view";

type Capabilities = { extensions?: Record<string, unknown>; elicitation?: unknown };

/** What a request's client declares it can do, from the envelope in its `_meta`. */
export const capabilitiesIn = (envelope: unknown) => ((envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Capabilities;

const capabilitiesOf = (ctx: ServerContext) => capabilitiesIn(ctx.mcpReq.envelope);

/** Whether a client follows tasks (it declares the extension in the request's own envelope). */
export const declaresTasks = (capabilities: Capabilities) => capabilities.extensions?.[TASKS_EXTENSION] !== undefined;
export const followsTasks = (ctx: ServerContext) => declaresTasks(capabilitiesOf(ctx));

/** Whether a client answers forms: elicitation declared, in form mode (the default when no mode is named). */
export function answersForms(capabilities: Capabilities) {
  const elicitation = capabilities.elicitation as { form?: unknown; url?: unknown } | undefined;
  return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
}

const TASK_ID = { params: z.looseObject({ taskId: z.string().min(1) }) };

/**
 * A REST refusal as the protocol error for it: an unknown (or unseen) task is invalid params, as the extension says,
 * and so is any other refusal of the caller's request; the hub failing is an internal error.
 */
function refused(taskId: string, answer: RouteAnswer) {
  const problem = (answer.body ?? {}) as { code?: string; detail?: string };
  const message = answer.status === 404 ? `Unknown task ${taskId}` : `${problem.code ?? `HTTP_${answer.status}`}: ${problem.detail ?? "refused"}`;
  return new ProtocolError(answer.status >= 500 ? ProtocolErrorCode.InternalError : ProtocolErrorCode.InvalidParams, message, { taskId, ...problem });
}

/** The caller's view of hub tasks, through the REST routes of its audience. */
export function hubTasks(app: Hono<HubEnv>, { c, caller }: McpRequest) {
  const agent = caller.audience === "agent";
  const tasks = agent ? "/api/v1/server/tasks" : "/api/v1/tasks";
  const interventions = agent ? "/api/v1/server/interventions" : "/api/v1/interventions";
  const ask = (method: string, path: string, query?: URLSearchParams, body?: unknown) => requestAs(app, c, caller.headers, method, path, query, body);
  return {
    tasks,
    interventions,
    /** The task and, when it waits on people, their open questions about it. */
    async read(taskId: string) {
      const answer = await ask("GET", `${tasks}/${encodeURIComponent(taskId)}`);
      if (answer.status !== 200) throw refused(taskId, answer);
      const task = answer.body as HubTask & { project_id: string };
      if (task.status !== "needs_human") return { task, questions: [] as HubQuestion[] };
      const open = await ask("GET", interventions, new URLSearchParams({ task_id: task.id, status: "pending" }));
      if (open.status !== 200) throw refused(taskId, open);
      return { task, questions: open.body as HubQuestion[] };
    },
    /** Sends one request a tasks/update or tasks/cancel stands for; a refusal is the protocol error for it. */
    async send(taskId: string, method: string, path: string, body: unknown) {
      const answer = await ask(method, path, undefined, body);
      if (answer.status >= 400) throw refused(taskId, answer);
    },
  };
}

export function taskMethods(app: Hono<HubEnv>, server: Server, request: McpRequest) {
  const { tasks, interventions, read, send } = hubTasks(app, request);

  function gate(ctx: ServerContext) {
    if (!followsTasks(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }

  server.setRequestHandler("tasks/get", TASK_ID, async ({ taskId }, ctx) => {
    gate(ctx);
    const { task, questions } = await read(taskId);
    return detailedTaskOf(task, questions, answersForms(capabilitiesOf(ctx)));
  });

  server.setRequestHandler("tasks/update", TASK_ID, async ({ taskId }, ctx) => {
    gate(ctx);
    const { task, questions } = await read(taskId);
    const planKeyOf = task.status === "plan_review" ? planKey(task.id) : undefined;
    const open = new Set(questions.filter((q) => q.status === "pending" && !q.target_session_id).map((q) => q.id));
    // Only answers to what the task waits on now count: any other key names a question already answered (here or by a
    // person) or never asked, and is ignored. Those are all checked before any is sent, so a bad one sends none.
    const answers = Object.entries(ctx.mcpReq.inputResponses ?? {})
      .filter(([key]) => key === planKeyOf || open.has(key))
      .map(([key, raw]) => ({ key, response: checkedAnswer(key, raw, key === planKeyOf) }))
      // Declined or dismissed: the question stays open, for this client or a person elsewhere.
      .filter((a) => a.response.action === "accept");
    for (const { key, response } of answers) {
      const content = response.content ?? {};
      if (key !== planKeyOf) await send(taskId, "POST", `${interventions}/${encodeURIComponent(key)}/respond`, { response: content.answer });
      else if (content.approve === true) await send(taskId, "POST", `${tasks}/${task.id}/approve-plan`, {});
      else await send(taskId, "POST", `${tasks}/${task.id}/revise-plan`, { feedback: String(content.feedback ?? "") });
    }
    return {};
  });

  server.setRequestHandler("tasks/cancel", TASK_ID, async ({ taskId }, ctx) => {
    gate(ctx);
    const { task } = await read(taskId);
    if (FINISHED.includes(task.status)) return {};
    await send(taskId, "DELETE", `${tasks}/${task.id}`, undefined).catch(async (e: unknown) => {
      // It finished between the read and the cancel: the same acknowledgement as for any finished task.
      if (!FINISHED.includes((await read(taskId)).task.status)) throw e;
    });
    return {};
  });
}

const ELICIT_RESULT = z.looseObject({
  action: z.enum(["accept", "decline", "cancel"]),
  content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).optional(),
});

/** An answer to one of the task's forms, held to the form's shape; -32602 naming the field otherwise. */
function checkedAnswer(key: string, raw: unknown, isPlan: boolean) {
  const bad = (field: string, rule: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, `inputResponses.${key}${field}: ${rule}`, { key });
  const parsed = ELICIT_RESULT.safeParse(raw);
  if (!parsed.success) throw bad("", "an elicitation result ({action, content})");
  const content = parsed.data.content ?? {};
  if (parsed.data.action === "accept" && !isPlan && typeof content.answer !== "string") throw bad(".content.answer", "a string");
  if (parsed.data.action === "accept" && isPlan && typeof content.approve !== "boolean") throw bad(".content.approve", "a boolean");
  return parsed.data;
}
