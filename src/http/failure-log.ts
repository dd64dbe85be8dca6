/**
 * A request's failure, logged with the request id the client was given. Only
 * the request line is logged: never a body, a header or a query string
 * (signed URLs carry their token there).
 */
import { logError } from "../log";
import type { HubContext } from "./context";

export const logFailure = (c: HubContext, what: string, err: unknown) =>
  logError(what, { request_id: c.var.requestId, method: c.req.method, path: c.req.path }, err);
