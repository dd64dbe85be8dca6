/** The A2A SDK's own client, reaching a project's agent in the Worker through the test's fetch, with the caller's credentials. */
import { exports } from "cloudflare:workers";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";
import { Role, type Message, type Part } from "@a2a-js/sdk";
import { BASE } from "./helpers";

export const a2aBase = (projectId: string) => `${BASE}/a2a/${projectId}/`;

/** A fetch into the Worker that sends `Authorization: Bearer <credential>` (an access token or an API key). */
export const fetchAs =
  (credential: string): typeof fetch =>
  (input, init) => {
    const request = new Request(input, init);
    request.headers.set("Authorization", `Bearer ${credential}`);
    return exports.default.fetch(request);
  };

/** A client made the way an A2A caller makes one: from the project's card, found at its well-known path. */
export async function a2aClient(projectId: string, credential: string, options: { legacy?: boolean } = {}): Promise<Client> {
  const fetchImpl = fetchAs(credential);
  const compat = options.legacy ? { legacyCompat: { enabled: true } } : {};
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, ...compat }),
      transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })],
    }),
  );
  return factory.createFromUrl(a2aBase(projectId));
}

export const text = (value: string): Part => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
export const data = (value: unknown): Part => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" });

/** A user's message: a new one, or (with taskId) one about a task. */
export function userMessage(parts: Part[], more: Partial<Message> = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...more,
  };
}

/** A raw JSON-RPC call, for what the SDK's client would never send. */
export async function rpc(projectId: string, credential: string, body: unknown, headers: Record<string, string> = { "A2A-Version": "1.0" }) {
  const res = await fetchAs(credential)(a2aBase(projectId), {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    type: res.headers.get("Content-Type") ?? "",
    body: (await res.json()) as { id: unknown; result?: any; error?: { code: number; message: string } },
  };
}
