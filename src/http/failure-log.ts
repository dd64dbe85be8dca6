/**
 * A request's failure, logged with the fields that name the request in its
 * request line (the request id the client was given, route, operation,
 * project, task, caller) and the concrete path. Never a body, a header or a
 * query string (signed URLs carry their token there).
 */
import { logError } from "../runtime/log";
import type { HubContext } from "./context";
import { requestFields } from "./request-log";

export const logFailure = (c: HubContext, what: string, err: unknown) => logError(what, { ...requestFields(c), path: c.req.path }, err);
