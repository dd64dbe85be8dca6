/**
 * Slack's request signatures (https://api.slack.com/authentication/verifying-requests-from-slack): an HMAC-SHA256 of
 * `v0:<timestamp>:<body>` under the app's signing secret, compared in constant time by slack-edge (Web Crypto's
 * verify). The timestamp must be an integer within five minutes of now either way: slack-edge refuses only old ones.
 */
import { verifySlackRequest } from "slack-edge";

/** How far a request's timestamp may be from now. */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

export type SignatureCheck = "ok" | "missing" | "stale" | "forged";

export async function checkSlackSignature(signingSecret: string, headers: Headers, body: string, nowMs = Date.now()): Promise<SignatureCheck> {
  const timestamp = headers.get("x-slack-request-timestamp");
  const signature = headers.get("x-slack-signature");
  if (!timestamp || !signature) return "missing";
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_WINDOW_SECONDS) return "stale";
  if (!/^v0=[0-9a-f]{64}$/.test(signature)) return "forged";
  return (await verifySlackRequest(signingSecret, headers, body)) ? "ok" : "forged";
}
