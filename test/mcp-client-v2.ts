/** The 2.x SDK's client pinned to the 2026-07-28 revision, reaching the Worker's /mcp through the test's fetch into the Worker. */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { MCP_URL, workerFetch } from "./mcp-client";

export const MODERN = "2026-07-28";
export const TASKS = "io.modelcontextprotocol/tasks";

/** A connected 2026-07-28 client sending these headers (an API key, or a bearer token) with every request. */
export async function modernClient(headers: Record<string, string>, fetch: typeof workerFetch = workerFetch) {
  const transport = new StreamableHTTPClientTransport(MCP_URL, { requestInit: { headers }, fetch });
  const client = new Client({ name: "hub-tests", version: "2.0.0" }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(transport);
  return { client, transport };
}

export const asModernAgent = (apiKey: string) => modernClient({ "X-API-Key": apiKey });
export const asModernPerson = (token: string) => modernClient({ Authorization: `Bearer ${token}` });

/** The envelope a 2026-07-28 request carries in `_meta`: its revision, its client and what that client can do. */
export const envelope = (clientCapabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": clientCapabilities,
});

/** How a hand-made 2026-07-28 request differs from the usual: its name header, capabilities, headers (undefined: left out), id, envelope. */
interface ModernOptions {
  name?: string;
  capabilities?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
  id?: string | number;
  meta?: Record<string, unknown>;
}

/** One 2026-07-28 request POSTed by hand, with the headers the revision requires (`Mcp-Name` when the method names something). */
export function modernPost(credentials: Record<string, string>, method: string, params: Record<string, unknown> = {}, options: ModernOptions = {}) {
  const { name, capabilities, headers = {}, id = 1, meta = {} } = options;
  const sent: Record<string, string | undefined> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": MODERN,
    "Mcp-Method": method,
    ...(name ? { "Mcp-Name": name } : {}),
    ...credentials,
    ...headers,
  };
  return workerFetch(MCP_URL, {
    method: "POST",
    headers: Object.fromEntries(Object.entries(sent).filter((h): h is [string, string] => h[1] !== undefined)),
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params: { ...params, _meta: { ...envelope(capabilities), ...meta } } }),
  });
}

/**
 * A client following MCP tasks the extension's way (ext-tasks over the 2.x client): it declares the Tasks extension, and
 * elicitation when `answersForms`, and sends the extension's requests framed by hand as the package asks of its host.
 */
export async function taskSession(credentials: Record<string, string>, { answersForms = false } = {}) {
  const clientInfo = { name: "hub-tests", version: "2.0.0" };
  const clientCapabilities = { ...(answersForms ? { elicitation: {} } : {}), extensions: { [TASKS]: {} } };
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: MODERN } }, capabilities: clientCapabilities });
  await client.connect(new StreamableHTTPClientTransport(MCP_URL, { requestInit: { headers: credentials }, fetch: workerFetch }));
  let id = 0;
  // The package frames the request's envelope itself: it is sent as framed, with the headers the revision requires.
  const rawDispatch = async (request: unknown) => {
    const { method, params = {} } = request as { method: string; params?: { name?: string; taskId?: string; _meta?: Record<string, unknown> } };
    const res = await modernPost(credentials, method, params, { name: params.name ?? params.taskId, id: `task-${++id}`, meta: params._meta });
    return (await res.json()) as never;
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: "hub-tests",
    rawDispatch,
    v2RequestFraming: { protocolVersion: MODERN, clientInfo, clientCapabilities },
  });
  return { client, session };
}
