/**
 * The hub's MCP server for one HTTP request: tools, resources and prompts for the caller's audience, each answered by
 * the REST route it stands for. Built per request (stateless: any isolate answers any request), for either era of the
 * protocol (serving.ts); the session a 2025-era client is given at initialisation carries only its subscriptions and
 * the questions of the tasks it made (session.ts).
 */
import type { Hono } from "hono";
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool } from "@modelcontextprotocol/server";
import type { HubContext, HubEnv } from "../http/context";
import { apiDocument } from "../openapi/document";
import { HUB_VERSION } from "../runtime/version";
import { toolNamed, toolsFor, type Audience } from "./catalogue";
import type { RouteAnswer } from "../http/internal-request";
import { callRoute, type McpCaller, type McpRequest } from "./dispatch";
import { promptsFor } from "./prompts";
import { readResource, RESOURCE_TEMPLATES, resourceOf } from "./resources";
import type { SessionPort } from "./session-client";
import { followsTasks, taskMethods } from "./tasks";
import { createdTaskOf, TASKS_EXTENSION, type HubTask } from "./task-view";
import { toolShape, type ApiDescription, type ToolShape } from "./tool-schemas";

const INSTRUCTIONS =
  "The Orchestratia hub: tasks of projects, worked by AI agents and steered by people. Agents (an API key) see the tools of the " +
  "agent CLI: tasks_to_do, get_task, start_task, submit_plan, add_note, ask_for_help, complete_task, fail_task, and delegate_task to hand work to another agent. People see " +
  "projects and tasks and steer them. Every tool acts with the caller's rights and answers what the REST API answers.";

/** The tools' shapes, from the app's description, made once per app and isolate. */
const shapesByApp = new WeakMap<Hono<HubEnv>, Map<string, ToolShape>>();

function shapesOf(app: Hono<HubEnv>) {
  let shapes = shapesByApp.get(app);
  if (!shapes) {
    const doc = apiDocument(app) as unknown as ApiDescription;
    shapes = new Map([...toolsFor("agent"), ...toolsFor("person")].map((spec) => [`${spec.audience}:${spec.name}`, toolShape(doc, spec)]));
    shapesByApp.set(app, shapes);
  }
  return shapes;
}

function toolList(app: Hono<HubEnv>, audience: Audience): Tool[] {
  const shapes = shapesOf(app);
  return toolsFor(audience).map((spec) => {
    const shape = shapes.get(`${audience}:${spec.name}`)!;
    return {
      name: spec.name,
      title: spec.title,
      description: `${spec.description}\n\n${shape.description}`.trim(),
      inputSchema: shape.inputSchema,
      ...(shape.outputSchema ? { outputSchema: shape.outputSchema } : {}),
      ...(spec.makesTask ? { execution: { taskSupport: "optional" as const } } : {}),
      annotations: {
        title: spec.title,
        readOnlyHint: spec.readOnly,
        destructiveHint: !spec.readOnly && (spec.destructive ?? false),
        idempotentHint: spec.readOnly || (spec.idempotent ?? false),
        openWorldHint: false,
      },
    };
  });
}

const isProblem = (a: RouteAnswer) => a.status >= 400;

/** A refusal as a tool error: the problem document itself, whose `code`, `detail` and `errors` a model can act on. */
export function refusalResult(answer: RouteAnswer): CallToolResult {
  const problem = (answer.body ?? {}) as { code?: string; detail?: string };
  return {
    isError: true,
    content: [
      { type: "text", text: `${problem.code ?? `HTTP_${answer.status}`}: ${problem.detail ?? "refused"}` },
      { type: "text", text: answer.text },
    ],
  };
}

function toolResult(answer: RouteAnswer, structured: boolean): CallToolResult {
  if (isProblem(answer)) return refusalResult(answer);
  const body = answer.body;
  return {
    content: [{ type: "text", text: answer.text }],
    ...(structured && body && typeof body === "object" && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {}),
  };
}

/** The revisions a 2025-era client may settle on at `initialize` (2026-07-28 is the modern leg's, through `server/discover`). */
export const LEGACY_PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
export const MODERN_PROTOCOL_VERSION = "2026-07-28";

const noSuchThing = (what: string) => new ProtocolError(ProtocolErrorCode.InvalidParams, what);

/** The MCP server answering one request as its caller. */
export function mcpServer(app: Hono<HubEnv>, { c, caller, session }: McpRequest, era: "legacy" | "modern") {
  const server = new Server(
    { name: "orchestratia-hub", title: "Orchestratia hub", version: HUB_VERSION },
    {
      // 2026-07-28 has no resources/subscribe: its clients listen (subscriptions/listen) instead.
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        ...(era === "modern" ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      instructions: INSTRUCTIONS,
      supportedProtocolVersions: era === "legacy" ? LEGACY_PROTOCOL_VERSIONS : [MODERN_PROTOCOL_VERSION],
    },
  );
  const { audience } = caller;

  server.setRequestHandler("tools/list", () => ({ tools: toolList(app, audience) }));

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const spec = toolNamed(audience, request.params.name);
    if (!spec) throw noSuchThing(`No tool named ${request.params.name} for ${audience === "agent" ? "agents" : "people"}`);
    const shape = shapesOf(app).get(`${audience}:${spec.name}`)!;
    const answer = await callRoute(app, c, caller.headers, spec.method, spec.path, shape.route, request.params.arguments ?? {});
    // A client following tasks is answered with the task the tool made, to follow by tasks/get or a subscription.
    // (The SDK's type for a tools/call answer does not know the extension's.)
    if (spec.makesTask && answer.status < 300 && followsTasks(ctx)) return createdTaskOf(answer.body as HubTask) as unknown as CallToolResult;
    // A 2025 session hears the questions of the tasks its client made (as elicitations, when it answers forms).
    if (spec.makesTask && answer.status < 300 && session) {
      const made = answer.body as { id: string; project_id: string };
      await session.follow(made.id, made.project_id);
    }
    return toolResult(answer, shape.outputSchema !== undefined);
  });

  server.setRequestHandler("resources/templates/list", () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler("resources/list", () => ({ resources: [] }));
  server.setRequestHandler("resources/read", async (request) => ({
    contents: [await readResource(app, c, caller, request.params.uri)],
  }));

  if (era === "legacy") subscriptionsOf2025(app, server, c, caller, session);
  else taskMethods(app, server, { c, caller });

  server.setRequestHandler("prompts/list", () => ({
    prompts: promptsFor(audience).map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args })),
  }));
  server.setRequestHandler("prompts/get", (request) => {
    const prompt = promptsFor(audience).find((p) => p.name === request.params.name);
    if (!prompt) throw noSuchThing(`No prompt named ${request.params.name}`);
    const args = request.params.arguments ?? {};
    const missing = prompt.arguments.filter((a) => a.required && !args[a.name]).map((a) => a.name);
    if (missing.length) throw noSuchThing(`The prompt ${prompt.name} needs ${missing.join(", ")}`);
    return { description: prompt.description, messages: [{ role: "user", content: { type: "text", text: prompt.text(args) } }] };
  });

  return server;
}

/** resources/subscribe and unsubscribe, 2025-era only: they live in the client's session. */
function subscriptionsOf2025(app: Hono<HubEnv>, server: Server, c: HubContext, caller: McpCaller, session: SessionPort | undefined) {
  const needSession = () => new ProtocolError(ProtocolErrorCode.InvalidRequest, "Subscriptions need a session: initialize first and send its Mcp-Session-Id");
  server.setRequestHandler("resources/subscribe", async (request) => {
    if (!session) throw needSession();
    const { uri } = request.params;
    // Reading it first is the access check: a task or project the caller cannot see is refused as the REST API refuses it.
    const read = await readResource(app, c, caller, uri);
    const projectId = (JSON.parse(read.text) as { project_id: string }).project_id;
    await session.subscribe(uri, projectId, resourceOf(uri)!.taskId);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", async (request) => {
    if (!session) throw needSession();
    await session.unsubscribe(request.params.uri);
    return {};
  });
}
