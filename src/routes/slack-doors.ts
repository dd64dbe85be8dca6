/**
 * The doors Slack posts to (API.md "Slack"): `/orc` commands, clicks and modal submissions, and the app's events.
 * Each request's signature is checked over its raw body before anything parses it (integrations/slack/doors-body.ts);
 * what a Slack user does is done as the person they are linked to, with that person's role.
 */
import { Hono } from "hono";
import { z } from "zod";
import { parseWith } from "../http/body";
import { hubBaseUrl } from "../http/base-url";
import type { HubEnv } from "../http/context";
import { fieldError } from "../http/problem";
import { documented } from "../openapi/operation";
import { logError } from "../runtime/log";
import { runOrc } from "../integrations/slack/commands";
import { signedSlackBody } from "../integrations/slack/doors-body";
import { forgetInstallation } from "../integrations/slack/installations";
import { clickButton, submitModal } from "../integrations/slack/interactions";
import { postEphemeral, responseUrlAllowed } from "../integrations/slack/response-url";

export const slackDoorRoutes = new Hono<HubEnv>();

const SIGNED = {
  "X-Slack-Signature": "`v0=<hex HMAC-SHA256 of v0:<timestamp>:<body> under the app's signing secret>`",
  "X-Slack-Request-Timestamp": "Seconds since the epoch; within five minutes of the hub's clock either way",
};
const REFUSALS =
  "Refused before the body is parsed: 413 over 64 KiB (by `Content-Length` before reading, else while reading); 401 naming the header and the rule " +
  "when the signature is missing, its timestamp is more than five minutes off, or it does not verify; 503 `NOT_CONFIGURED` without `SLACK_SIGNING_SECRET`. " +
  "Then a field Slack should have sent and did not is 422 naming it.";

const form = (text: string) => Object.fromEntries(new URLSearchParams(text));

function json(text: string, field: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw fieldError(field, "must be JSON");
  }
}

const slashCommand = z.object({
  command: z.string(),
  text: z.string().default(""),
  team_id: z.string().min(1),
  user_id: z.string().min(1),
  channel_id: z.string().min(1),
  response_url: z.url(),
});

slackDoorRoutes.post(
  "/commands",
  documented({
    id: "receiveSlackCommand",
    tag: "Slack",
    summary: "Slack's slash command `/orc`",
    description:
      "Called by Slack for `/orc <command>`. Answered at once with an empty 200; the answer, private to the person, is posted to the command's " +
      "`response_url` (only one on `https://hooks.slack.com`: any other is 422). `help`, `link <code>`, `tasks`, `task <id prefix>`, " +
      "`watch <project>`, `mute`, `run <template> [name=value …]`; anything else is `help`. All but `help` and `link` act as the linked person.\n\n" +
      REFUSALS,
    caller: "slack",
    headers: SIGNED,
    rawBody: {
      contentTypes: ["application/x-www-form-urlencoded"],
      description: "Slack's slash command fields (`text`, `team_id`, `user_id`, `channel_id`, `response_url`…)",
    },
    responses: { 200: { description: "Acknowledged (an empty body): the answer follows through `response_url`" } },
  }),
  async (c) => {
    const body = parseWith(slashCommand, form(await signedSlackBody(c)));
    if (!responseUrlAllowed(c.env, body.response_url)) throw fieldError("response_url", "must be Slack's (https://hooks.slack.com)");
    const at = { teamId: body.team_id, slackUserId: body.user_id, channelId: body.channel_id, baseUrl: hubBaseUrl(c) };
    c.executionCtx.waitUntil(
      runOrc(c.env, at, body.text)
        .catch((e) => {
          logError("slack command failed", { operation: "slack_command" }, e);
          return { text: "Something went wrong on the hub: try again." };
        })
        .then((reply) => postEphemeral(c.env, body.response_url, reply)),
    );
    return c.body(null, 200);
  },
);

const who = { team: z.object({ id: z.string().min(1) }), user: z.object({ id: z.string().min(1) }) };

const blockActions = z.looseObject({
  ...who,
  trigger_id: z.string(),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).min(1),
  response_url: z.string().optional(),
  container: z.looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
});

const viewSubmission = z.looseObject({
  ...who,
  view: z.looseObject({
    callback_id: z.string(),
    state: z.looseObject({ values: z.record(z.string(), z.record(z.string(), z.looseObject({ value: z.string().nullish() }))) }),
  }),
});

const modalErrors = z.object({ response_action: z.literal("errors"), errors: z.record(z.string(), z.string()) });

slackDoorRoutes.post(
  "/interactions",
  documented({
    id: "receiveSlackInteraction",
    tag: "Slack",
    summary: "Slack's button clicks and modal submissions",
    description:
      "Called by Slack with the interaction's JSON in the form field `payload`. `block_actions`: a button of the hub's messages (answer a question, " +
      "approve a task or a plan, retry; a free-text question's Answer and a plan's Ask for changes open a modal). What it does is done before the " +
      "200; a refusal (not linked, a viewer, answered already, gone) is told to the person privately through the payload's `response_url`. " +
      "`view_submission` of the modals: done, or `{response_action: errors}` shown in the modal. Other kinds are acknowledged and ignored.\n\n" +
      REFUSALS,
    caller: "slack",
    headers: SIGNED,
    rawBody: { contentTypes: ["application/x-www-form-urlencoded"], description: "`payload`: the interaction's JSON" },
    responses: { 200: { description: "Done or refused (an empty body), or a modal's errors", schema: modalErrors } },
  }),
  async (c) => {
    const raw = parseWith(z.object({ payload: z.string() }), form(await signedSlackBody(c))).payload;
    const payload = parseWith(z.looseObject({ type: z.string() }), json(raw, "payload"), "payload");
    if (payload.type === "block_actions") {
      const p = parseWith(blockActions, payload, "payload");
      const action = p.actions[0]!;
      const channel = p.container?.channel_id;
      const ts = p.container?.message_ts;
      const refused = await clickButton(c.env, {
        teamId: p.team.id,
        slackUserId: p.user.id,
        triggerId: p.trigger_id,
        value: action.value ?? action.action_id,
        clicked: channel && ts ? { channel, ts } : null,
      });
      if (refused && p.response_url) c.executionCtx.waitUntil(postEphemeral(c.env, p.response_url, { text: refused }));
      return c.body(null, 200);
    }
    if (payload.type === "view_submission") {
      const p = parseWith(viewSubmission, payload, "payload");
      const text = p.view.state.values.text?.text?.value ?? "";
      const error = await submitModal(c.env, { teamId: p.team.id, slackUserId: p.user.id, callbackId: p.view.callback_id, text });
      return error ? c.json({ response_action: "errors" as const, errors: { text: error } }) : c.body(null, 200);
    }
    return c.body(null, 200);
  },
);

const event = z.looseObject({
  type: z.string(),
  team_id: z.string().optional(),
  event: z.looseObject({ type: z.string(), tokens: z.looseObject({ bot: z.array(z.string()).optional() }).optional() }).optional(),
});

slackDoorRoutes.post(
  "/events",
  documented({
    id: "receiveSlackEvent",
    tag: "Slack",
    summary: "Slack's Events API",
    description:
      "Called by Slack. `url_verification` answers its `challenge`. `app_uninstalled`, and `tokens_revoked` naming a bot token, forget the " +
      "workspace's installation (and what was still to be posted there). Other events are acknowledged.\n\n" +
      REFUSALS,
    caller: "slack",
    headers: SIGNED,
    rawBody: { contentTypes: ["application/json"], description: "An Events API envelope: `url_verification`, or `event_callback` with `team_id` and `event`" },
    responses: { 200: { description: "The challenge, or an empty body", schema: z.object({ challenge: z.string() }) } },
  }),
  async (c) => {
    const body = parseWith(event, json(await signedSlackBody(c), "(body)"));
    if (body.type === "url_verification") return c.json({ challenge: parseWith(z.object({ challenge: z.string() }), body).challenge });
    if (body.type === "event_callback" && body.event) {
      const gone = body.event.type === "app_uninstalled" || (body.event.type === "tokens_revoked" && (body.event.tokens?.bot?.length ?? 0) > 0);
      if (gone) await forgetInstallation(c.env, parseWith(z.object({ team_id: z.string().min(1) }), body).team_id);
    }
    return c.body(null, 200);
  },
);
