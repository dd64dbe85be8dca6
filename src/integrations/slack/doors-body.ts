/**
 * A request to one of the doors Slack posts to, read as Slack signs it: refused by its declared length before a byte
 * is read and counted while it streams, then its signature checked over the raw text before anything parses it.
 */
import type { Context } from "hono";
import type { HubEnv } from "../../http/context";
import { badRequest, Problem } from "../../http/problem";
import { readBounded } from "../../telemetry/otlp-body";
import { checkSlackSignature, SIGNATURE_WINDOW_SECONDS, type SignatureCheck } from "./signature";

/** Slack's commands, clicks and events are a few kilobytes; a modal's submission is the largest. */
export const SLACK_MAX_BODY_BYTES = 64 * 1024;

const tooLarge = () => new Problem(413, "PAYLOAD_TOO_LARGE", `A Slack request's body is at most ${SLACK_MAX_BODY_BYTES} bytes`);
const unreadable = () => badRequest("The request body could not be read: the connection broke off or its encoding is malformed", "BODY_UNREADABLE");

/** What each failed check tells the caller: the header and the rule. */
const REFUSALS: Record<Exclude<SignatureCheck, "ok">, string> = {
  missing: "X-Slack-Signature and X-Slack-Request-Timestamp are required: Slack signs every request",
  stale: `X-Slack-Request-Timestamp must be within ${SIGNATURE_WINDOW_SECONDS / 60} minutes of the hub's clock`,
  forged: "X-Slack-Signature does not verify: it must be v0= and the HMAC-SHA256 of v0:<timestamp>:<body> under the app's signing secret",
};

/** The body's text, once its signature verifies; 503 until the signing secret is set. */
export async function signedSlackBody(c: Context<HubEnv>): Promise<string> {
  const secret = c.env.SLACK_SIGNING_SECRET;
  if (!secret) throw new Problem(503, "NOT_CONFIGURED", "Slack is not set up: set the SLACK_SIGNING_SECRET secret");
  if (Number(c.req.header("Content-Length") ?? 0) > SLACK_MAX_BODY_BYTES) throw tooLarge();
  const raw = c.req.raw.body;
  const text = raw ? new TextDecoder().decode(await readBounded(raw, SLACK_MAX_BODY_BYTES, tooLarge, unreadable)) : "";
  const check = await checkSlackSignature(secret, c.req.raw.headers, text);
  if (check !== "ok") throw new Problem(401, "UNAUTHORIZED", REFUSALS[check]);
  return text;
}
