/**
 * One line per HTTP request as it ends: what was asked (the route's pattern,
 * never the concrete path or its query string, where signed URLs carry their
 * token), by whom (an id, never a credential), about which project and task,
 * how it ended and how long it took. The same fields name a request in its
 * failure line (failure-log.ts), so both are found by the request id.
 */
import { createMiddleware } from "hono/factory";
import { routePath } from "hono/route";
import { log, logs, type LogFields } from "../runtime/log";
import type { HubContext, HubEnv } from "./context";

/** A route's project and task parameters: `:id` under /projects (or `:projectId`) and `:id` under /tasks. */
const PROJECT_PARAM = /\/projects\/:(id|projectId)(?=\/|$)/;
const TASK_PARAM = /\/tasks\/:id(?=\/|$)/;
/** Only an id is worth logging from a path; anything else names nothing (and is the client's text). */
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const idParam = (c: HubContext, name: string | undefined) => {
  const value = name === undefined ? undefined : c.req.param(name);
  return value !== undefined && ID.test(value) ? value : undefined;
};

/** Who asked, as a kind and an id. */
function actorOf(c: HubContext) {
  const p = c.var.principal;
  if (!p) return undefined;
  return p.kind === "user" ? { kind: "user", id: p.user.id } : { kind: "server", id: p.server.id };
}

/**
 * The fields naming a request: read once it has run (or failed), when the
 * matched route is the one that answered and handlers have said which
 * project and task it was about.
 */
export function requestFields(c: HubContext): LogFields {
  const method = c.req.method;
  const route = routePath(c);
  return {
    request_id: c.var.requestId,
    method,
    route,
    operation: c.var.operation ?? `${method} ${route}`,
    project_id: c.var.logProject ?? idParam(c, PROJECT_PARAM.exec(route)?.[1]),
    task_id: c.var.logTask ?? (TASK_PARAM.test(route) ? idParam(c, "id") : undefined),
    actor: actorOf(c),
  };
}

/** A refusal of what a client sent is routine (info); only the hub's own failures (5xx) are errors. */
export const logRequests = createMiddleware<HubEnv>(async (c, next) => {
  const started = performance.now();
  await next();
  const status = c.res.status;
  const level = status >= 500 ? "error" : "info";
  if (!logs(level)) return;
  log(level, "request", { ...requestFields(c), status, duration_ms: Math.round((performance.now() - started) * 10) / 10 });
});
