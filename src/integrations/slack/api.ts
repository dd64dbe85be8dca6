/**
 * The Slack Web API as the hub calls it: slack-edge's client (slack-web-api-client) at SLACK_API_ROOT, with its own
 * retries off: a rate limit (429 and its Retry-After) is the caller's to honour, so the outbox waits in storage rather
 * than a request sleeping in an isolate.
 */
import { SlackAPIClient, SlackAPIConnectionError, SlackAPIError } from "slack-edge";
import type { Env } from "../../runtime/env";

export const SLACK_API = "https://slack.com/api/";

export const apiRootOf = (env: Pick<Env, "SLACK_API_ROOT">) => env.SLACK_API_ROOT || SLACK_API;

export const slackClient = (env: Pick<Env, "SLACK_API_ROOT">, token?: string) =>
  new SlackAPIClient(token, { baseUrl: apiRootOf(env), retryHandlers: [], logLevel: "WARN", throwSlackAPIError: true });

/** What a failed call tells: Slack's error code (or the HTTP status), and how long Slack asked to wait, if it did. */
export function slackFailure(e: unknown): { status: number | null; error: string; retryAfterMs: number | null } {
  if (e instanceof SlackAPIConnectionError) {
    const retryAfter = Number(e.headers?.get("retry-after"));
    return {
      status: e.status > 0 ? e.status : null,
      error: e.status > 0 ? `HTTP ${e.status}` : String(e.cause?.message ?? e.message),
      retryAfterMs: e.status === 429 ? (Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 1) * 1000 : null,
    };
  }
  if (e instanceof SlackAPIError) return { status: 200, error: e.error, retryAfterMs: e.error === "ratelimited" ? 1000 : null };
  return { status: null, error: e instanceof Error ? e.message : String(e), retryAfterMs: null };
}

/** Slack's errors that mean the workspace's token no longer works: the installation is over. */
export const TOKEN_GONE = new Set(["invalid_auth", "account_inactive", "token_revoked", "token_expired", "not_authed", "team_not_found"]);
/** Slack's errors that mean the channel will take nothing from the bot as it is. */
export const CHANNEL_GONE = new Set(["channel_not_found", "not_in_channel", "is_archived", "restricted_action", "team_access_not_granted"]);
/**
 * Slack's errors (answered with HTTP 200) that say Slack failed this time, not that the call was wrong: tried again on
 * the retry schedule, as a 5xx is. (`ratelimited` has its own wait.)
 */
export const TRANSIENT = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);
