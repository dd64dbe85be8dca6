/**
 * Answering through a `response_url` Slack hands with a command or a click: a private (ephemeral) message to the
 * person who acted. The URL comes in the request body, so it is posted to only when it is Slack's (hooks.slack.com,
 * or the origin of SLACK_API_ROOT where a test or a proxy stands in for Slack): the hub is not made to post elsewhere.
 */
import type { Env } from "../../runtime/env";
import { log, logError } from "../../runtime/log";
import { apiRootOf } from "./api";

const SLACK_HOOKS = "https://hooks.slack.com";

/** Whether a response URL is Slack's to post to. */
export function responseUrlAllowed(env: Pick<Env, "SLACK_API_ROOT">, url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.username || target.password) return false;
  return target.origin === SLACK_HOOKS || target.origin === new URL(apiRootOf(env)).origin;
}

/** A message to a response URL: Block Kit blocks with their text as the fallback. */
export interface EphemeralReply {
  text: string;
  blocks?: unknown[];
}

/** Posts a private answer to the person; a URL that is not Slack's, or a failure, is logged and dropped. */
export async function postEphemeral(env: Pick<Env, "SLACK_API_ROOT">, url: string, reply: EphemeralReply): Promise<void> {
  if (!responseUrlAllowed(env, url)) {
    log("warn", "slack response_url is not Slack's", { operation: "slack_response", host: URL.canParse(url) ? new URL(url).host : null });
    return;
  }
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ response_type: "ephemeral", replace_original: false, ...reply }),
      redirect: "manual",
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  } catch (e) {
    logError("slack response_url failed", { operation: "slack_response" }, e);
  }
}
