/**
 * Slack as the tests play it: requests to the hub's Slack doors signed as Slack signs them (HMAC-SHA256 of
 * `v0:<timestamp>:<body>` under the signing secret), and the fake Web API (test/slack-api-setup.ts) read and steered.
 */
import { env, SELF } from "cloudflare:test";
import type { SlackCall } from "./slack-api-setup";

export const SLACK_ROOT = new URL(env.SLACK_API_ROOT!).origin;
export const SIGNING_SECRET = env.SLACK_SIGNING_SECRET!;
/** Response URLs Slack hands the hub point at the fake, which records what is posted to them. */
export const responseUrl = (name = crypto.randomUUID()) => `${SLACK_ROOT}/response/${name}`;

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** Slack's signature of a body sent at `timestamp` (seconds). */
export async function slackSignature(body: string, timestamp: number, secret = SIGNING_SECRET): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `v0=${hex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`v0:${timestamp}:${body}`)))}`;
}

export interface SignedOptions {
  /** Seconds since the epoch the request says it was sent at; now by default. */
  timestamp?: number;
  secret?: string;
  /** A signature to send in place of the right one. */
  signature?: string;
}

/** POSTs a form body to one of the hub's Slack doors (`/slack/commands`, `/slack/interactions`), signed. */
export async function postSigned(path: string, body: string, opts: SignedOptions = {}, contentType = "application/x-www-form-urlencoded") {
  const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
  return SELF.fetch(`https://hub.test${path}`, {
    method: "POST",
    headers: {
      "Content-Type": contentType,
      "X-Slack-Request-Timestamp": String(timestamp),
      "X-Slack-Signature": opts.signature ?? (await slackSignature(body, timestamp, opts.secret)),
    },
    body,
  });
}

/** A slash command as Slack posts it. */
export function slashCommand(text: string, who: { team: string; user: string; channel?: string }, response = responseUrl()) {
  return new URLSearchParams({
    command: "/orc",
    text,
    team_id: who.team,
    user_id: who.user,
    user_name: who.user.toLowerCase(),
    channel_id: who.channel ?? "C0GENERAL",
    response_url: response,
    trigger_id: `trig.${crypto.randomUUID()}`,
  }).toString();
}

/** An interaction (a button, a modal's submission) as Slack posts it: its JSON in the `payload` field. */
export const interaction = (payload: Record<string, unknown>) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();

export const slackCalls = async (method?: string): Promise<SlackCall[]> => {
  const all: SlackCall[] = await (await fetch(`${SLACK_ROOT}/control/calls`)).json();
  return method ? all.filter((c) => c.method === method) : all;
};

export const resetSlack = () => fetch(`${SLACK_ROOT}/control/reset`, { method: "POST" });

/** Makes the fake answer a channel's next `times` posts and updates with `status` and `error` (and Retry-After). */
export const refuseChannel = (channel: string, refusal: { times: number; status: number; error: string; retry_after?: number }) =>
  fetch(`${SLACK_ROOT}/control/refuse`, { method: "POST", body: JSON.stringify({ channel, ...refusal }) });
