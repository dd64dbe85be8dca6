/**
 * A model provider, faked at the network edge and run in Node beside the tests on loopback: OpenAI-compatible chat
 * completions at `POST /openai/{name}/v1/chat/completions` and the Anthropic Messages API at
 * `POST /anthropic/{name}/v1/messages`, each answering from a script the test sets: `POST /control/{name}`
 * `{answers: [...]}` queues answers, each `{review}` (the structured output), `{raw}` (text that is not a review),
 * `{refusal}`, `{status, retryAfter?}` (an error answer) and optionally `delayMs`; `GET /control/{name}` answers the
 * requests received (path, headers, body). With nothing queued it answers 400.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    modelApi: string;
  }
}

export interface ScriptedAnswer {
  review?: unknown;
  raw?: string;
  refusal?: string;
  status?: number;
  retryAfter?: string;
  delayMs?: number;
}

interface Provider {
  answers: ScriptedAnswer[];
  received: { path: string; headers: Record<string, string>; body: any }[];
}

const providers = new Map<string, Provider>();
const provider = (name: string) => {
  let p = providers.get(name);
  if (!p) providers.set(name, (p = { answers: [], received: [] }));
  return p;
};

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => resolve(body));
  });

/** The answer as the style's API gives it. */
function answerBody(style: string, a: ScriptedAnswer, model: string): unknown {
  if (style === "openai") {
    const message =
      a.refusal !== undefined
        ? { role: "assistant", content: null, refusal: a.refusal }
        : { role: "assistant", content: a.raw ?? JSON.stringify(a.review), refusal: null };
    return { id: "chatcmpl-1", object: "chat.completion", created: 1, model, choices: [{ index: 0, message, finish_reason: "stop" }] };
  }
  const content =
    a.refusal !== undefined
      ? []
      : a.raw !== undefined
        ? [{ type: "text", text: a.raw }]
        : [{ type: "tool_use", id: "toolu_1", name: "review", input: a.review }];
  const stop_reason = a.refusal !== undefined ? "refusal" : a.raw !== undefined ? "end_turn" : "tool_use";
  return { id: "msg_1", type: "message", role: "assistant", model, content, stop_reason, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
}

export default async function setup(project: TestProject) {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, "http://model");
    const text = await read(req);
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    const [, kind, name] = url.pathname.split("/");
    if (kind === "control" && name) {
      const p = provider(name);
      if (req.method === "POST") p.answers.push(...(JSON.parse(text).answers as ScriptedAnswer[]));
      return json(200, { received: p.received, queued: p.answers.length });
    }
    if ((kind === "openai" || kind === "anthropic") && name && req.method === "POST") {
      const p = provider(name);
      const body = JSON.parse(text || "null");
      p.received.push({ path: url.pathname, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body });
      const a = p.answers.shift();
      if (!a) return json(400, { error: { type: "invalid_request_error", message: "nothing scripted for this request" } });
      if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
      if (a.status) return json(a.status, { error: { type: "error", message: `scripted ${a.status}` } }, a.retryAfter ? { "Retry-After": a.retryAfter } : {});
      return json(200, answerBody(kind, a, body?.model ?? ""));
    }
    json(404, { error: { message: "no such path" } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("modelApi", `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
