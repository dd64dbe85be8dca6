/** WebSocket endpoints answer a plain request with 426, naming the upgrade they need, and read a person's token from it. */
import { signInWithToken } from "./guards";
import type { HubContext } from "../http/context";
import { forbidden, Problem, unauthorized } from "../http/problem";
import { isPersonalToken } from "../auth/personal-tokens";

export function requireUpgrade(c: HubContext) {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
    throw new Problem(426, "UPGRADE_REQUIRED", "This endpoint speaks WebSocket: send an Upgrade request", undefined, { Upgrade: "websocket" });
  }
}

/** The JWT of a WebSocket upgrade: subprotocols ["bearer", "<jwt>"] (browsers cannot set headers) or ?access_token=. */
function upgradeToken(request: Request): { token: string | null; subprotocol: string | null } {
  const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
  const i = offered.indexOf("bearer");
  if (i >= 0 && offered[i + 1]) return { token: offered[i + 1]!, subprotocol: "bearer" };
  return { token: new URL(request.url).searchParams.get("access_token"), subprotocol: null };
}

/**
 * Signs in the person opening a WebSocket; returns who, until when, and the
 * subprotocol to answer with (the object accepting the socket sends it back).
 */
export async function personOfUpgrade(c: HubContext) {
  requireUpgrade(c);
  const { token, subprotocol } = upgradeToken(c.req.raw);
  if (!token) throw unauthorized('Send the access token as subprotocols ["bearer", "<jwt>"] or ?access_token=');
  // A socket is checked once, when it opens: a token's scope and projects could not hold on what is typed into it.
  if (isPersonalToken(token)) throw forbidden("Sockets need a person signed in: a personal access token is not accepted here", "PERSONAL_TOKEN_NOT_ACCEPTED");
  const { user, expiresAt } = await signInWithToken(c, token);
  const subprotocolHeaders: Record<string, string> = subprotocol ? { "X-Subprotocol": subprotocol } : {};
  return { user, expiresAt, subprotocolHeaders };
}
