/**
 * Failures are logged as one JSON line each, carrying the request id the
 * client was given, so the line a user quotes can be found. Only the request
 * line is logged: never a body, a header or a query string (signed URLs carry
 * their token there).
 */
import type { HubContext } from "./context";

const described = (err: unknown) =>
  err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : { message: String(err) };

export function logFailure(c: HubContext, what: string, err: unknown) {
  console.error(
    JSON.stringify({
      level: "error",
      msg: what,
      request_id: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      error: described(err),
    }),
  );
}
