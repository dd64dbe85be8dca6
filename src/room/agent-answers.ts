/**
 * The frames the agent protocol sends: answers to requests (response:success or
 * response:error, correlated by the request's id) and notify:* messages.
 */
import type { ErrorCode } from "../protocol/agent-orchestrator-messages";
import { sendJson } from "../http/websockets";

export interface Message {
  type: string;
  id?: string;
  payload?: unknown;
  /** A W3C trace context the message belongs to (the hub's addition, as on its notify frames). */
  traceparent?: string;
}

/** What a request is answered with; `later` when the answer comes with a commit (ask-user). */
export type Answer =
  | { type: "response:success"; payload: unknown }
  | { type: "response:error"; error: { code: ErrorCode; message: string; details?: unknown } }
  | { type: "later" };

const stamp = () => new Date().toISOString();

export function respond(ws: WebSocket, correlationId: string | undefined, payload: unknown) {
  sendJson(ws, { type: "response:success", id: crypto.randomUUID(), correlationId: correlationId ?? null, timestamp: stamp(), payload });
}

export function respondError(ws: WebSocket, correlationId: string | undefined | null, code: ErrorCode, message: string, details?: unknown) {
  sendJson(ws, {
    type: "response:error",
    id: crypto.randomUUID(),
    correlationId: correlationId ?? null,
    timestamp: stamp(),
    error: { code, message, ...(details === undefined ? {} : { details }) },
  });
}

/** A notification; one about a task carries the task's W3C trace context. */
export const notify = (ws: WebSocket, type: string, payload: unknown, traceparent?: string | null) =>
  sendJson(ws, { type, id: crypto.randomUUID(), timestamp: stamp(), ...(traceparent ? { traceparent } : {}), payload });

export const success = (payload: unknown): Answer => ({ type: "response:success", payload });
export const failure = (code: ErrorCode, message: string, details?: unknown): Answer => ({
  type: "response:error",
  error: { code, message, ...(details === undefined ? {} : { details }) },
});

export function send(ws: WebSocket, correlationId: string | undefined, answer: Answer) {
  if (answer.type === "response:success") respond(ws, correlationId, answer.payload);
  else if (answer.type === "response:error") respondError(ws, correlationId, answer.error.code, answer.error.message, answer.error.details);
}

/** Payload errors are answered before anything runs. */
export class InvalidPayload extends Error {
  constructor(readonly answer: Answer) {
    super("invalid payload");
  }
}

export const idReused = (id: string) =>
  failure("INVALID_REQUEST", `The id ${JSON.stringify(id)} was already used for another request; send a new id for a new request`, { id });
