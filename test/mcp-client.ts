/** The official MCP SDK's client, reaching the Worker's /mcp over Streamable HTTP through the test's fetch into the Worker. */
import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { ResourceUpdatedNotificationSchema, type CallToolResult, type ClientCapabilities, type ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { BASE } from "./helpers";

export const MCP_URL = new URL(`${BASE}/mcp`);

/** Every request the client makes, kept so that a test can see what went over the wire. */
export const workerFetch = (url: string | URL | Request, init?: RequestInit) => exports.default.fetch(new Request(url, init));

/** A connected client sending these headers (an API key, or a bearer token) with every request. */
export async function mcpClient(
  headers: Record<string, string>,
  options: Partial<StreamableHTTPClientTransportOptions> = {},
  capabilities: ClientCapabilities = {},
) {
  const transport = new StreamableHTTPClientTransport(MCP_URL, { requestInit: { headers }, fetch: workerFetch, ...options });
  // Ajv, the client's default, compiles schemas with `new Function`, which workerd forbids.
  const client = new Client({ name: "hub-tests", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator(), capabilities });
  await client.connect(transport);
  return { client, transport };
}

export const asAgent = (apiKey: string) => mcpClient({ "X-API-Key": apiKey });
export const asPerson = (token: string) => mcpClient({ Authorization: `Bearer ${token}` });

/** A tool call that succeeded: its structured answer. */
export function structured(result: unknown): any {
  const r = result as CallToolResult;
  expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
  return r.structuredContent ?? JSON.parse((r.content[0] as { text: string }).text);
}

/** A tool call that was refused: the problem it carries, checked for its code. */
export function refusal(result: unknown, status: number, code: string): any {
  const r = result as CallToolResult;
  expect(r.isError, JSON.stringify(r)).toBe(true);
  const problem = JSON.parse((r.content[1] as { text: string }).text);
  expect({ status: problem.status, code: problem.code }).toEqual({ status, code });
  expect((r.content[0] as { text: string }).text).toBe(`${code}: ${problem.detail}`);
  return problem;
}

/** A resource read's JSON. */
export const resourceJson = (read: ReadResourceResult): any => JSON.parse((read.contents[0] as { text: string }).text);

/** A person's client that keeps the URIs of every resources/updated it hears, and says when its session's stream is open. */
export async function listening(token: string) {
  let open = false;
  const { client } = await mcpClient(
    { Authorization: `Bearer ${token}` },
    {
      fetch: async (url, init) => {
        const res = await workerFetch(url, init);
        if (init?.method === "GET" && res.ok) open = true;
        return res;
      },
    },
  );
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  return { client, updated, streamOpen: () => open };
}
