/**
 * JSON-RPC on the wire as A2A's conformance kit sends it: any body, with or without credentials or `A2A-Version`, and the
 * answers read as they came (test/a2a-client.ts has the SDK's own client).
 */
import { parseSseStream } from "@a2a-js/sdk";
import { expect } from "vitest";
import { a2aBase } from "./a2a-client";
import { workerFetch } from "./mcp-client";

export const cardUrl = (projectId: string) => `${a2aBase(projectId)}.well-known/agent-card.json`;

/** Enough of an answer to see what went wrong. */
const shown = (reply: RpcReply) => reply.text.slice(0, 600);

export interface RpcReply {
  status: number;
  headers: Headers;
  // Tests read arbitrary JSON-RPC fields.
  json: any;
  text: string;
}

export interface RpcOptions {
  /** The bearer credential; null sends none. */
  credential: string | null;
  /** The A2A-Version header; null sends none (the protocol then means 0.3). */
  version?: string | null;
  headers?: Record<string, string>;
}

/** POSTs a body, sent as is, to the project's JSON-RPC endpoint and returns the raw answer. */
export async function postRpc(projectId: string, body: string, { credential, version = "1.0", headers = {} }: RpcOptions): Promise<RpcReply> {
  const sent = new Headers({ "Content-Type": "application/json", ...headers });
  if (credential) sent.set("Authorization", `Bearer ${credential}`);
  if (version) sent.set("A2A-Version", version);
  const res = await workerFetch(a2aBase(projectId), { method: "POST", headers: sent, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** One JSON-RPC request (a fresh id unless one is given). */
export const jsonRpc = (projectId: string, method: string, params: unknown, options: RpcOptions & { id?: string | number | null }) =>
  postRpc(projectId, JSON.stringify({ jsonrpc: "2.0", id: options.id === undefined ? crypto.randomUUID() : options.id, method, params }), options);

/** The result of a JSON-RPC answer that succeeded. */
export function rpcResult(reply: RpcReply): any {
  expect(reply.status, shown(reply)).toBe(200);
  expect(reply.json?.error, shown(reply)).toBeUndefined();
  expect(reply.json.jsonrpc).toBe("2.0");
  return reply.json.result;
}

/** The error of a JSON-RPC answer, checked to be a well-formed JSON-RPC 2.0 error object with this code. */
export function rpcError(reply: RpcReply, code: number): { code: number; message: string; data?: unknown } {
  expect(reply.status, shown(reply)).toBe(200);
  expect(reply.json?.error?.code, shown(reply)).toBe(code);
  expect(reply.json.jsonrpc).toBe("2.0");
  expect(reply.json).not.toHaveProperty("result");
  expect(Number.isInteger(reply.json.error.code)).toBe(true);
  expect(typeof reply.json.error.message).toBe("string");
  expect(reply.json.error.message.trim()).not.toBe("");
  return reply.json.error;
}

/** Opens a streaming method (SendStreamingMessage, SubscribeToTask) and reads its server-sent events as JSON-RPC responses. */
export async function rpcStream(projectId: string, method: string, params: unknown, options: RpcOptions & { id?: string }) {
  const id = options.id ?? crypto.randomUUID();
  const headers = new Headers({ "Content-Type": "application/json", Accept: "text/event-stream", ...options.headers });
  if (options.credential) headers.set("Authorization", `Bearer ${options.credential}`);
  if (options.version !== null) headers.set("A2A-Version", options.version ?? "1.0");
  const response = await workerFetch(a2aBase(projectId), { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method, params }) });
  async function* events() {
    for await (const event of parseSseStream(response)) yield { type: event.type, data: JSON.parse(event.data) };
  }
  return { id, response, events: events() };
}
