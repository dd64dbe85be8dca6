/**
 * `POST /hooks/triggers/{id}`: a trigger's door (API.md "Templates, schedules and triggers"). No session: the call is
 * verified first (bearer secret, Standard Webhooks or GitHub signature), then parsed, then the project's room makes the
 * template's graph with its run in one batch. A delivery id seen before answers the earlier run and makes nothing.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { unseal } from "../auth/sealed";
import { bearerVerifies, githubSignatureVerifies, standardSignatureVerifies } from "../auth/trigger-calls";
import { templates, triggers, type TriggerRow } from "../db/schema";
import { githubFiring } from "../domain/github-events";
import { parseWith } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { badRequest, conflict, fieldError, notFound, Problem, unauthorized } from "../http/problem";
import { documented } from "../openapi/operation";
import { httpFiringBody } from "../protocol/triggers";
import { runInRoom } from "../room/client";
import type { RoomActor } from "../room/commands";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { readBounded } from "../telemetry/otlp-body";
import { offerGraph } from "../room/run-offers";

export const triggerHookRoutes = new Hono<HubEnv>({ strict: false });

/** A call's body: GitHub's largest deliveries are well under this (it caps payloads at 25 MB, but issues and PRs are kilobytes). */
export const TRIGGER_MAX_BODY_BYTES = 1024 * 1024;
const MAX_DELIVERY_ID = 200;

const tooLarge = () => new Problem(413, "PAYLOAD_TOO_LARGE", `The call's body is larger than the ${TRIGGER_MAX_BODY_BYTES}-byte limit`);
const unreadable = () => badRequest("The request body could not be read: the connection broke off or its encoding is malformed", "BODY_UNREADABLE");
/** One answer for every failed check: which part was wrong is not told. */
const refused = () => unauthorized("The call's secret or signature does not verify");

const fired = z.object({ run_id: z.string(), task_ids: z.array(z.string()) }).meta({ id: "TriggerFired" });
const repeated = fired.extend({ repeated: z.literal(true) }).meta({ id: "TriggerRepeated" });
const pong = z.object({ ping: z.literal(true) });

async function bodyText(c: HubContext): Promise<string> {
  const raw = c.req.raw.body;
  if (!raw) return "";
  const bytes = await readBounded(raw, TRIGGER_MAX_BODY_BYTES, tooLarge, unreadable);
  return new TextDecoder().decode(bytes);
}

function parsedJson(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`The request body is not valid JSON: ${(e as Error).message}`, "MALFORMED_JSON");
  }
}

/** A delivery id from a header, held to a length a key can be. */
function deliveryIdFrom(c: HubContext, header: string): string | undefined {
  const value = c.req.header(header)?.trim();
  if (!value) return undefined;
  if (value.length > MAX_DELIVERY_ID) throw fieldError(`header.${header}`, `must be at most ${MAX_DELIVERY_ID} characters`);
  return value;
}

/** An http trigger's call: verified by its bearer or its Standard Webhooks signature, then its `{parameters}` read. */
async function httpCall(c: HubContext, trigger: TriggerRow) {
  const signature = c.req.header("webhook-signature");
  let text: string;
  let deliveryId: string | undefined;
  if (signature !== undefined) {
    text = await bodyText(c);
    const headers = {
      "webhook-id": c.req.header("webhook-id") ?? "",
      "webhook-timestamp": c.req.header("webhook-timestamp") ?? "",
      "webhook-signature": signature,
    };
    if (!standardSignatureVerifies(await unseal(c.env.DATA_KEY, trigger.secretSealed), text, headers)) throw refused();
    deliveryId = deliveryIdFrom(c, "webhook-id");
  } else {
    // The bearer is checked before a byte of the body is read.
    if (!(await bearerVerifies(c.req.header("Authorization"), trigger.secretHash))) throw refused();
    text = await bodyText(c);
    deliveryId = deliveryIdFrom(c, "Idempotency-Key");
  }
  if (trigger.paused) throw paused();
  const body = parseWith(httpFiringBody, parsedJson(text));
  return { parameters: body.parameters, deliveryId };
}

const paused = () => conflict("The trigger is paused: nothing was made", "TRIGGER_PAUSED");

type GithubOutcome = { parameters: Record<string, unknown>; deliveryId: string | undefined } | { answer: Response };

/** A GitHub delivery: verified by X-Hub-Signature-256, then the event and action matched against the trigger's rule. */
async function githubCall(c: HubContext, trigger: TriggerRow, declared: { name: string; type: string }[]): Promise<GithubOutcome> {
  const text = await bodyText(c);
  const secret = await unseal(c.env.DATA_KEY, trigger.secretSealed);
  if (!(await githubSignatureVerifies(secret, text, c.req.header("X-Hub-Signature-256")))) throw refused();
  const event = c.req.header("X-GitHub-Event");
  if (!event) throw fieldError("header.X-GitHub-Event", "is required: GitHub names the event in it");
  // GitHub's ping, sent when the webhook is added: answered so its settings page shows the hook working.
  if (event === "ping") return { answer: c.json({ ping: true as const }, 200) };
  if (trigger.paused) throw paused();
  // A hook set to GitHub's other content type sends the same JSON as the form field `payload`.
  const form = c.req.header("Content-Type")?.toLowerCase().startsWith("application/x-www-form-urlencoded");
  const payload = parsedJson(form ? (new URLSearchParams(text).get("payload") ?? "") : text);
  const decision = githubFiring(trigger.github ?? { events: [] }, event, payload, declared);
  if (!decision.fire) return { answer: c.json({ ignored: decision.ignored }, 202) };
  return { parameters: decision.parameters, deliveryId: deliveryIdFrom(c, "X-GitHub-Delivery") };
}

triggerHookRoutes.post(
  "/hooks/triggers/:id",
  documented({
    id: "fireTrigger",
    tag: "Automation",
    summary: "Call a trigger: make its template's graph",
    description:
      "No session. The call is verified before its body is parsed, and its body is at most 1 MiB (413 before reading when " +
      "`Content-Length` says more). A missing or wrong secret or signature is 401 and says only that it does not verify; an " +
      "unknown trigger (or one deleted) is 404, which tells nothing a trigger's random id did not.\n\n" +
      "**`kind: http`**: `Authorization: Bearer <secret>`, or the Standard Webhooks headers `webhook-id`, `webhook-timestamp` " +
      "and `webhook-signature` signed with the secret (a timestamp more than five minutes from the hub's clock is 401). The body " +
      "is `{parameters}`, laid over the trigger's own. The delivery id is `webhook-id` when signed, else the `Idempotency-Key` " +
      "header, else none (every call fires).\n\n" +
      "**`kind: github`**: a GitHub repository webhook (content type `application/json`, or the form kind whose `payload` field " +
      "holds the same JSON) with `X-Hub-Signature-256`; the " +
      "delivery id is `X-GitHub-Delivery`. `ping` answers 200 and makes nothing. `X-GitHub-Event` and the payload's `action` " +
      "must be one of the trigger's `github.events`; `issues.labeled` must add `github.label` when set; `issue_comment.created` " +
      "(on an issue or a pull request) must start with `github.command` when set. Any other delivery answers 202 `{ignored}` " +
      "saying why, and makes nothing. Each template parameter is read from the payload at its `github.mapping` path, else by " +
      "its name from the event: `title`, `number`, `url`, `body`, `author` of the issue or pull request (for a comment, its " +
      "body, link and author), `branch` (a pull request's head), `label` (the label added), `args` (the comment's text after " +
      "the command; in a mapping, `command.args`) and `repo` (`owner/name`); the trigger's parameters lie under them.\n\n" +
      "Then the template is instantiated as `POST .../templates/{tid}/instantiate` does (422 naming the parameter the template " +
      "refuses, nothing made), with a run of `source: trigger`: 201 for a new run; 200 with `repeated: true` and the same run " +
      "for a delivery id the trigger has seen before (nothing made, however many arrive at once). A paused trigger is 409 " +
      "`TRIGGER_PAUSED` and makes nothing.",
    caller: "trigger",
    headers: {
      "webhook-id": "Standard Webhooks: the message id (the delivery id)",
      "webhook-timestamp": "Standard Webhooks: seconds since the epoch",
      "webhook-signature": "Standard Webhooks: `v1,<base64 HMAC-SHA256>`, one or more separated by spaces",
      "Idempotency-Key": "An http trigger's delivery id when the call is not signed",
      "X-Hub-Signature-256": "GitHub: `sha256=<hex HMAC-SHA256 of the body>`",
      "X-GitHub-Event": "GitHub: the event's name (`issues`, `issue_comment`, `pull_request`, `ping`)",
      "X-GitHub-Delivery": "GitHub: the delivery's id",
    },
    rawBody: {
      contentTypes: ["application/json"],
      description: "`{parameters}` for an http trigger; the event's payload as GitHub sends it for a github trigger",
    },
    responses: {
      201: fired,
      200: {
        description: "A delivery seen before: the earlier run (`repeated: true`), nothing made; or GitHub's `ping`",
        schema: z.union([repeated, pong]),
      },
      202: { description: "A GitHub delivery the trigger does not take: nothing made, `ignored` says why", schema: z.object({ ignored: z.string() }) },
    },
  }),
  async (c) => {
    const declared = Number(c.req.header("Content-Length") ?? NaN);
    if (declared > TRIGGER_MAX_BODY_BYTES) throw tooLarge();
    const id = c.req.param("id");
    if (!isUuid(id)) throw notFound("Trigger");
    const [found] = await c.var.db
      .select({ trigger: triggers, template: { parameters: templates.parameters, tasks: templates.tasks } })
      .from(triggers)
      .innerJoin(templates, eq(templates.id, triggers.templateId))
      .where(eq(triggers.id, id))
      .limit(1);
    if (!found) throw notFound("Trigger");
    const { trigger, template } = found;
    c.set("logProject", trigger.projectId);
    const call = trigger.kind === "github" ? await githubCall(c, trigger, template.parameters) : await httpCall(c, trigger);
    if ("answer" in call) return call.answer;
    // The hub acts for the caller, under the trigger's name in the log and the run's `created_by`.
    const actor: RoomActor = { ...HUB_ACTOR, label: `trigger:${trigger.name ?? trigger.id}` };
    const result = await runInRoom(
      c,
      trigger.projectId,
      {
        op: "instantiate",
        templateId: trigger.templateId,
        parameters: { ...trigger.parameters, ...call.parameters },
        run: { source: "trigger", triggerId: trigger.id, ...(call.deliveryId ? { deliveryId: call.deliveryId } : {}) },
      },
      false,
      actor,
    );
    const data = result.data as { run_id: string; task_ids: string[]; repeated?: boolean };
    if (data.repeated) return c.json({ run_id: data.run_id, task_ids: data.task_ids, repeated: true as const }, 200);
    await offerGraph(c.env, trigger.projectId, template);
    return c.json({ run_id: data.run_id, task_ids: data.task_ids }, 201);
  },
);
