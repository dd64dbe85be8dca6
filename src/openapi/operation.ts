/**
 * What a route is, for the API's description: attached to the route as a
 * middleware (`documented(...)`) next to the handler it describes, with the
 * same zod schemas the handler validates its input with. The document
 * (document.ts) is built by walking the app's routes, so a route without a
 * description is found (and fails a test) rather than silently missing.
 */
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { HubEnv } from "../http/context";

/** Who may call an operation; each names a security scheme of the document (document.ts). */
export type Caller =
  | "person" // a signed-in person's JWT
  | "agent" // a server's API key
  | "anyone" // no credentials
  | "bootstrap" // the BOOTSTRAP_TOKEN secret
  | "signed-url" // a short-lived signed URL the hub handed out
  | "telegram" // Telegram's secret-token header
  | "slack" // Slack's signature over the body (X-Slack-Signature), checked by the operation
  | "trigger"; // a trigger's secret, as a bearer or as the key of a signature over the body

/** A response: its schema (JSON), or a description of a response that is not JSON. */
export type Reply =
  | z.ZodType
  | {
      description: string;
      schema?: z.ZodType;
      contentType?: string;
      /** Other media types the same answer may come in (the request's encoding chooses), described by `description`. */
      alsoAs?: string[];
      headers?: Record<string, string>;
    };

export interface Operation {
  /** Stable and unique: the typed client's handle on it, and the `operation` of log lines. */
  id: string;
  tag: string;
  summary: string;
  /** Markdown: rules, transitions, what the caller should know beyond the schema. */
  description?: string;
  caller: Caller | Caller[];
  /** Path parameters, when they are more than plain strings named by the path. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** The JSON request body, as the handler parses it. */
  body?: z.ZodType;
  /** Whether a body must be sent (an empty body counts as `{}` for bodies whose fields are all optional). */
  bodyRequired?: boolean;
  /** Success responses by status. Problems (4XX/5XX) are documented for every operation. */
  responses: Partial<Record<200 | 201 | 202 | 204 | 206 | 101 | 301 | 302 | 304, Reply>>;
  /** Request headers the operation reads (name → description). */
  headers?: Record<string, string>;
  /** A request body that is not JSON: its media types (the description says what they hold). */
  rawBody?: { contentTypes: string[]; description: string };
  /** Media types refusals may come in beside problem documents (the request's encoding chooses). */
  refusalsAlsoAs?: string[];
}

const OPERATION = Symbol("operation");

type Described = MiddlewareHandler<HubEnv> & { [OPERATION]: Operation };

/** The middleware that carries a route's description; at run time it only names the operation for the logs. */
export function documented(op: Operation): MiddlewareHandler<HubEnv> {
  const middleware = (async (c, next) => {
    c.set("operation", op.id);
    await next();
  }) as Described;
  middleware[OPERATION] = op;
  return middleware;
}

/** The description a route handler carries, if it is one. */
export const operationOf = (handler: unknown): Operation | undefined =>
  typeof handler === "function" ? (handler as Partial<Described>)[OPERATION] : undefined;
