/**
 * The OpenAPI 3.1 document of the hub, built from the routes of the app that
 * serves it: each route's `documented(...)` description and the zod schemas in
 * it (zod-openapi turns them into JSON Schema). What a route validates is what
 * the document says, because both are the same schema.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject } from "zod-openapi";
import { BOOKMARK_HEADER, MAX_BOOKMARK_LENGTH } from "../db/d1-bookmarks";
import { HUB_VERSION } from "../runtime/version";
import { operationOf, type Caller, type Operation, type Reply } from "./operation";
import { problemSchema } from "./problem-schema";

/** A route the app answers: its method and its path in the document's form (`/tasks/{id}`). */
export interface RouteKey {
  method: string;
  path: string;
}

/** Hono's `/tasks/:id` → OpenAPI's `/tasks/{id}`; a trailing slash is not part of the path. */
export const openApiPath = (honoPath: string) => (honoPath.replace(/\/+$/, "") || "/").replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");

const pathParamNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);

/** Each route of the app (not middleware mounted for every method), with the description it carries if any. */
export function appRoutes(app: Hono<any>): { key: RouteKey; operation?: Operation }[] {
  const found = new Map<string, { key: RouteKey; operation?: Operation }>();
  for (const route of app.routes) {
    if (route.method === "ALL") continue;
    const key = { method: route.method.toLowerCase(), path: openApiPath(route.path) };
    const id = `${key.method} ${key.path}`;
    const entry = found.get(id) ?? { key };
    // A sub-app's handler may arrive wrapped; hono keeps the original beside it.
    const handler = route.handler as unknown as { [k: symbol]: unknown };
    const composed = Object.getOwnPropertySymbols(handler).map((s) => handler[s]);
    entry.operation ??= operationOf(route.handler) ?? composed.map(operationOf).find(Boolean);
    found.set(id, entry);
  }
  return [...found.values()];
}

const SECURITY: Record<Caller, Record<string, string[]>[]> = {
  person: [{ personToken: [] }],
  agent: [{ apiKeyHeader: [] }, { apiKeyBearer: [] }],
  anyone: [{}],
  bootstrap: [{ bootstrapToken: [] }],
  "signed-url": [{}],
  telegram: [{ telegramSecret: [] }],
  // Slack signs the body with the app's signing secret (X-Slack-Signature, X-Slack-Request-Timestamp): no credential header.
  slack: [{}],
  // A signed call (Standard Webhooks, GitHub) carries no credential header: its signature is checked by the operation.
  trigger: [{ triggerSecret: [] }, {}],
};

const securitySchemes = {
  personToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "A person's access token from `POST /api/v1/auth/login` (15 minutes; renew with `POST /api/v1/auth/refresh`).",
  },
  apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "A server's API key (`orc_...`) from registration." },
  apiKeyBearer: { type: "http", scheme: "bearer", description: "The same API key as `Authorization: Bearer orc_...`." },
  bootstrapToken: { type: "http", scheme: "bearer", description: "The `BOOTSTRAP_TOKEN` secret; only for creating the first admin." },
  telegramSecret: {
    type: "apiKey",
    in: "header",
    name: "X-Telegram-Bot-Api-Secret-Token",
    description: "`TELEGRAM_WEBHOOK_SECRET`, which Telegram sends with every update.",
  },
  triggerSecret: {
    type: "http",
    scheme: "bearer",
    description: "A trigger's secret, shown when the trigger was made or its secret rotated (or a signature made with it: see the operation).",
  },
} as const;

const PROBLEM_CONTENT = { "application/problem+json": { schema: problemSchema } };

const STATUS_TEXT: Record<number, string> = {
  101: "Switching protocols: the WebSocket is open",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No content",
  206: "Partial content (a `Range` was asked for)",
  301: "Moved permanently",
  302: "Found: see `Location`",
};

/** Headers (name → what it means) as the object schema the generator takes. */
const described = (headers: Record<string, string | z.ZodType>) =>
  z.object(
    Object.fromEntries(
      Object.entries(headers).map(([name, header]) => [name, typeof header === "string" ? z.string().optional().meta({ description: header }) : header]),
    ),
  );

/** `X-D1-Bookmark` on answers (src/db/d1-bookmarks.ts): every one but a socket's upgrade; one component, referred to. */
const answerBookmark = z
  .string()
  .optional()
  .meta({
    description:
      "Where the database stood for this request: after what it read and wrote. Sent when the request used the " +
      "database or carried a bookmark; send the newest one received back as `X-D1-Bookmark`",
    header: { id: "D1BookmarkAnswered" },
  });
const ANSWER_BOOKMARK = { [BOOKMARK_HEADER]: answerBookmark };

function response(status: number, reply: Reply) {
  const bookmark = status === 101 ? {} : ANSWER_BOOKMARK;
  if (reply instanceof z.ZodType)
    return { description: STATUS_TEXT[status] ?? "OK", content: { "application/json": { schema: reply } }, headers: described(bookmark) };
  // A response header's description says when it is sent; none is promised on every answer.
  const headers = { ...reply.headers, ...bookmark };
  const types = reply.schema || reply.contentType ? [reply.contentType ?? "application/json", ...(reply.alsoAs ?? [])] : [];
  const content = types.length ? Object.fromEntries(types.map((t, i) => [t, { schema: i === 0 ? (reply.schema ?? {}) : {} }])) : undefined;
  return { description: reply.description, ...(content ? { content } : {}), ...(Object.keys(headers).length ? { headers: described(headers) } : {}) };
}

const IDEMPOTENCY_KEY =
  "The same key and body from the same caller replays the first answer (for 24 h); another body under the key is 422 " +
  "`IDEMPOTENCY_KEY_REUSED`, a request still in flight with it 409 `IDEMPOTENCY_KEY_IN_FLIGHT`";

/** `X-D1-Bookmark` on requests (src/app.ts): every operation reads it; one component, referred to. */
const requestBookmark = z
  .string()
  .max(MAX_BOOKMARK_LENGTH)
  .optional()
  .meta({
    description:
      "The newest `X-D1-Bookmark` an answer of this hub carried: this request reads a database at least that recent, " +
      "so a caller reads its own writes wherever the hub reads from. Without it reads go to the primary database; " +
      "`first-unconstrained` lets any copy answer. Anything else is 400 `INVALID_BOOKMARK`",
    param: { id: "D1Bookmark" },
  });

/**
 * The headers an operation reads: its own, Idempotency-Key on every POST a person or an agent makes
 * (middleware/idempotency.ts), and X-D1-Bookmark on all (src/app.ts).
 */
function requestHeaders(op: Operation, method: string, callers: Caller[]) {
  const idempotent = method === "post" && callers.some((c) => c === "person" || c === "agent");
  return described({ ...(idempotent ? { "Idempotency-Key": IDEMPOTENCY_KEY } : {}), ...op.headers, [BOOKMARK_HEADER]: requestBookmark });
}

function operationObject(op: Operation, path: string, method: string): ZodOpenApiOperationObject {
  const names = pathParamNames(path);
  const params = op.params ?? (names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined);
  const callers = Array.isArray(op.caller) ? op.caller : [op.caller];
  const headers = requestHeaders(op, method, callers);
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, reply] of Object.entries(op.responses)) responses[status as "200"] = response(Number(status), reply!);
  const refusalContent = { ...PROBLEM_CONTENT, ...Object.fromEntries((op.refusalsAlsoAs ?? []).map((t) => [t, { schema: {} }])) };
  responses["4XX"] = {
    description: "The request was refused: a problem document names why (see /docs/problems)",
    content: refusalContent,
    headers: described(ANSWER_BOOKMARK),
  };
  responses["5XX"] = {
    description: "The hub failed or lacks a setting: a problem document, quoting the request id",
    content: refusalContent,
    headers: described(ANSWER_BOOKMARK),
  };
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: callers.flatMap((c) => SECURITY[c]),
    ...(params || op.query || headers
      ? { requestParams: { ...(params ? { path: params } : {}), ...(op.query ? { query: op.query } : {}), ...(headers ? { header: headers } : {}) } }
      : {}),
    ...(op.body ? { requestBody: { required: op.bodyRequired ?? true, content: { "application/json": { schema: op.body } } } } : {}),
    ...(op.rawBody
      ? {
          requestBody: {
            required: true,
            description: op.rawBody.description,
            content: Object.fromEntries(op.rawBody.contentTypes.map((t) => [t, { schema: { type: "string", format: "binary" } }])),
          },
        }
      : {}),
    responses,
  };
}

const TAGS = [
  ["Health", "Whether the hub is up, and which protocol versions it speaks."],
  ["Auth", "People's sign-in: the first admin, login, tokens, and linking a Telegram chat."],
  ["Users", "People's accounts and roles (admin, member, viewer)."],
  ["Projects", "Projects, their members and their event log."],
  ["Servers", "Registering agents' servers, their heartbeat, registration tokens."],
  ["Sessions", "Agent processes on a server, each in one project; people start, watch and stop them."],
  ["Tasks", "Tasks as people see and steer them (`/api/v1/tasks`)."],
  ["Agent tasks", "The same tasks from an agent's side (`/api/v1/server/tasks`, API key)."],
  ["Daemon", "The official daemon's own paths: its task polling and its socket."],
  ["Interventions", "Questions and approvals agents ask people."],
  ["DataRefs", "Large payloads in R2, moved through signed short-lived URLs."],
  ["Files", "Files people send to a session's machine and fetch from it, through its daemon."],
  ["Session files", "A session's working tree, browsed and edited beside its terminal, through its daemon."],
  ["Live", "WebSockets: dashboards' event stream, agents' message protocol, terminals."],
  ["Remote work", "Agents running commands in, and sending files to, other sessions of their project (the `remote_exec` setting)."],
  ["Approval rules", "Rules the daemons' PreToolUse hook decides agents' tool calls by, and the log of every call it saw."],
  ["Code health", "Snapshots of a codebase's health the daemons' scanner makes (`orchestratia code`), their history, and scans people ask for."],
  ["Usage and budgets", "What the agents used (tokens, cost, API time) per task, graph, project, model and agent; budgets that warn, hold and stop."],
  [
    "Automation",
    "Templates of task graphs with parameters, schedules and inbound triggers (HTTP, GitHub) that instantiate them, and the runs each firing made.",
  ],
  ["Webhooks", "Signed HTTP deliveries of a project's events (Standard Webhooks)."],
  ["Telemetry", "A project's tasks sent to an OpenTelemetry collector as spans (OTLP/HTTP)."],
  ["Telegram", "The Telegram bot: its webhook and its setup."],
  ["Slack", "The Slack app: its manifest and installs, the doors Slack posts commands, button presses and events to, and the channels projects post to."],
  ["MCP", "The Model Context Protocol endpoint, for any MCP client, and the OAuth authorize step that signs a person in for one."],
  ["A2A", "Each project as an Agent2Agent (A2A) agent: its card, and the JSON-RPC endpoint other agents delegate work to."],
  ["Telemetry", "The OTLP/HTTP receiver the coding agents' OpenTelemetry exporters send their usage to (`/v1/metrics`, `/v1/logs`, `/v1/traces`)."],
  ["Reference", "This description, and the list of problem codes."],
] as const;

/** The document for an app whose routes all carry descriptions (a test holds every route to that). */
export function apiDocument(app: Hono<any>) {
  const paths: ZodOpenApiPathsObject = {};
  for (const { key, operation } of appRoutes(app)) {
    if (!operation) continue;
    (paths[key.path] ??= {})[key.method as "get"] = operationObject(operation, key.path, key.method);
  }
  return createDocument(
    {
      openapi: "3.1.0",
      info: {
        title: "Orchestratia hub",
        version: HUB_VERSION,
        description:
          "The coordination hub for AI agents: agents register, receive tasks and exchange results through typed " +
          "dependencies and contracts; people watch and steer. Errors are RFC 9457 problem documents whose `code` " +
          "is listed at [/docs/problems](/docs/problems).",
      },
      tags: TAGS.map(([name, description]) => ({ name, description })),
      paths,
      components: { securitySchemes: securitySchemes as never },
    },
    { reused: "inline" },
  );
}
