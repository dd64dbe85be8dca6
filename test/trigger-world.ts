/** A template a trigger fires, and the calls of the trigger's door, for the trigger tests. */
import { conformingFetch } from "./api-conformance";
import { BASE, call } from "./helpers";
import { expectOk, type World } from "./task-world";

export const triggersOf = (projectId: string) => `/api/v1/projects/${projectId}/triggers`;

/** One task whose title and spec carry every parameter a GitHub event gives by default. */
export async function triggerTemplate(w: World, name = `github-work-${crypto.randomUUID().slice(0, 6)}`) {
  const body = {
    name,
    parameters: [
      { name: "title", type: "string", required: true },
      { name: "body", type: "string", default: "" },
      { name: "url", type: "string", default: "" },
      { name: "number", type: "number", default: 0 },
      { name: "branch", type: "string", default: "-" },
      { name: "author", type: "string", default: "-" },
      { name: "args", type: "string", default: "" },
      { name: "repo", type: "string", default: "" },
    ],
    tasks: [
      {
        key: "work",
        title: "{{title}} (#{{number}})",
        spec: "From {{author}} on {{branch}} in {{repo}}: {{url}}\n\n{{body}}\n\nAsked: {{args}}",
      },
      { key: "review", title: "Review #{{number}}", dependencies: [{ on: "work", dependency_type: "blocks" }] },
    ],
  };
  return (await expectOk(call(`/api/v1/projects/${w.project.id}/templates`, { token: w.member.token, body }), 201)).json as { id: string; name: string };
}

/** A trigger of `kind` on a new template: its id, url and secret. */
export async function newTrigger(w: World, kind: "http" | "github", extra: Record<string, unknown> = {}) {
  const template = await triggerTemplate(w);
  const made = await expectOk(call(triggersOf(w.project.id), { token: w.member.token, body: { template_id: template.id, kind, ...extra } }), 201);
  return made.json as { id: string; url: string; secret: string; template_id: string };
}

export interface HookReply {
  status: number;
  json: any;
  text: string;
  headers: Headers;
}

/** `POST /hooks/triggers/{id}` with a raw body and headers, as an outside caller sends it. */
export async function hook(id: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Promise<HookReply> {
  const res = await conformingFetch(
    new Request(`${BASE}/hooks/triggers/${id}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body,
      ...(typeof body === "string" ? {} : { duplex: "half" }),
    } as RequestInit),
  );
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}
