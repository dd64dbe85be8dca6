/**
 * RFC 9457 problem documents. Every error the hub answers is a `Problem`,
 * thrown from wherever it is found and rendered once by the app's error handler.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { InvalidCursor, NotFound } from "../domain/errors";
import type { FieldError } from "../protocol/field-errors";
import { problemType, type ProblemCode } from "./problem-codes";

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  411: "Length Required",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  422: "Unprocessable Content",
  426: "Upgrade Required",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export class Problem extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ProblemCode,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
    /** Extra members for the problem document (RFC 9457 extensions). */
    readonly extensions: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = "Problem";
  }

  toJSON() {
    return {
      type: problemType(this.code),
      title: TITLES[this.status] ?? "Error",
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extensions,
    };
  }

  toResponse(): Response {
    return new Response(JSON.stringify(this.toJSON()), {
      status: this.status,
      headers: { "Content-Type": "application/problem+json", ...this.headers },
    });
  }
}

export const badRequest = (detail: string, code: ProblemCode = "MALFORMED_REQUEST") => new Problem(400, code, detail);

export const unauthorized = (detail: string, code: ProblemCode = "UNAUTHORIZED") =>
  new Problem(401, code, detail, undefined, { "WWW-Authenticate": 'Bearer realm="orchestratia"' });

export const forbidden = (detail: string, code: ProblemCode = "FORBIDDEN") => new Problem(403, code, detail);

export const notFound = (what: string) => new Problem(404, "NOT_FOUND", `${what} not found`);

export const conflict = (detail: string, code: ProblemCode = "CONFLICT", extensions: Record<string, unknown> = {}) =>
  new Problem(409, code, detail, undefined, {}, extensions);

export const validationFailed = (errors: FieldError[]) =>
  new Problem(
    422,
    "VALIDATION_FAILED",
    errors.length === 1 ? `${errors[0]!.path}: ${errors[0]!.message}` : `${errors.length} fields are invalid: ${errors.map((e) => e.path).join(", ")}`,
    errors,
  );

export const fieldError = (path: string, message: string) => validationFailed([{ path, message }]);

/** The problem a domain failure (domain/errors.ts) is answered with; undefined for any other error. */
export function problemOfDomainError(err: unknown): Problem | undefined {
  if (err instanceof NotFound) return notFound(err.what);
  if (err instanceof InvalidCursor) return badRequest(err.message, "INVALID_CURSOR");
  return undefined;
}

/** A 5xx problem as the client gets it: naming the request, so that a report of it can be matched to the hub's log. */
export const quotingRequestId = (p: Problem, requestId: string) =>
  new Problem(p.status, p.code, `${p.detail}; quote request id ${requestId} when you report it`, p.errors, p.headers, {
    ...p.extensions,
    request_id: requestId,
  });

export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new Problem(429, "RATE_LIMITED", detail, undefined, { "Retry-After": String(retryAfterSeconds) });
