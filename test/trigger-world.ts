/** A template a trigger fires, and the calls of the trigger's door, for the trigger tests. */
import { sign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { conformingFetch } from "./api-conformance";
import { BASE, call, replyOf, type Reply } from "./helpers";
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

/** `POST /hooks/triggers/{id}` with a raw body and headers, as an outside caller sends it. */
export async function hook(id: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await conformingFetch(
    new Request(`${BASE}/hooks/triggers/${id}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body,
      ...(typeof body === "string" ? {} : { duplex: "half" }),
    } as RequestInit),
  );
  return replyOf(res);
}

/** A GitHub delivery as GitHub sends it: the payload signed by `@octokit/webhooks-methods`, with its event and delivery id. */
export async function githubDelivery(
  id: string,
  secret: string,
  event: string,
  payload: unknown,
  delivery = crypto.randomUUID(),
  tamper?: (body: string) => string,
) {
  const body = JSON.stringify(payload);
  const signature = await sign(secret, body);
  return hook(id, tamper ? tamper(body) : body, {
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": event,
    "X-GitHub-Delivery": delivery,
    "X-GitHub-Hook-ID": "292430182",
    "X-Hub-Signature-256": signature,
  });
}

/** A call's body and headers signed the Standard Webhooks way by the `standardwebhooks` library, at `at`. */
export function standardSigned(secret: string, parameters: Record<string, unknown>, msgId = `msg_${crypto.randomUUID()}`, at = new Date()) {
  const body = JSON.stringify({ parameters });
  const headers = {
    "webhook-id": msgId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(msgId, at, body),
  };
  return { body, headers };
}

/** The task as the API answers it. */
export const taskOf = async (w: World, taskId: string) => (await expectOk(call(`/api/v1/tasks/${taskId}`, { token: w.admin }))).json;

/** The trigger's runs, newest first. */
export const runsOf = async (w: World, triggerId: string) =>
  (await expectOk(call(`/api/v1/projects/${w.project.id}/runs?trigger_id=${triggerId}`, { token: w.admin }))).json.runs as {
    id: string;
    task_ids: string[];
    delivery_id: string | null;
    parameters: Record<string, unknown>;
    created_by: string;
    source: string;
  }[];
