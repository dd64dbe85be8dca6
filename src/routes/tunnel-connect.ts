/**
 * People's tunnels (API.md "SSH access grants and tunnels", `orchestratia-connect`):
 * a writer of a session gets a short-lived token for its machine and a port,
 * and `orchestratia-connect <token>` opens `/ws/tunnel` with it. The Worker
 * checks the token and the person's access again, then joins the socket to the
 * session's server's link, which has the daemon open the port (`tunnel_open`)
 * and relays `tunnel_data` both ways. A token opens one tunnel.
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { CONNECT_TOKEN_TTL_SECONDS, issueConnectToken, verifyConnectToken, type ConnectClaims } from "../auth/connect-token";
import { currentUser, person } from "../middleware/guards";
import { isFinalSession } from "../domain/session-lifecycle";
import { hubBaseUrl } from "../http/base-url";
import { readJson } from "../http/body";
import { tcpPort } from "../http/fields";
import type { HubContext, HubEnv } from "../http/context";
import { closeQuietly, relayAfterFirstFrame } from "../http/first-frame-relay";
import { conflict, forbidden } from "../http/problem";
import { requireUpgrade } from "../middleware/upgrade";
import { documented } from "../openapi/operation";
import { linkStub } from "../server-link/client";
import { terminalAccess } from "../server-link/terminal-access";
import { timestamp } from "../views/fields";
import { sessionIn } from "./project-sessions";

export const connectRoutes = { people: new Hono<HubEnv>(), socket: new Hono<HubEnv>() };

/** How long the person has to send the token after connecting (connect.py sends it at once). */
const AUTH_GRACE_MS = 10_000;
const CLOSE_REFUSED = 4003;

const connectBody = z.object({
  target_port: tcpPort.default(22).meta({ description: "The port on the session's machine (its own 127.0.0.1)" }),
});
const connectAnswer = z
  .object({
    token: z.string().meta({ description: "Single use; a JWT whose payload names the hub, the session and the port" }),
    expires_at: timestamp,
    command: z.string().meta({ description: "What to run on the person's machine: `orchestratia-connect <token>`" }),
  })
  .meta({ id: "ConnectToken" });

connectRoutes.people.post(
  "/:id/sessions/:sid/connect",
  documented({
    id: "connectToSession",
    tag: "Sessions",
    summary: "A token for orchestratia-connect to the session's machine",
    description:
      "For people who may type in the session (admins, and members of every project its server serves): a token that opens one tunnel " +
      `to \`target_port\` on the session's machine, through \`/ws/tunnel\`, within ${CONNECT_TOKEN_TTL_SECONDS / 60} minutes. ` +
      "`orchestratia-connect <token>` then listens on a local port (`ssh -p <port> user@127.0.0.1`), or `--proxy` serves as an ssh " +
      "ProxyCommand. 403 for viewers and members who may not type there; 409 `SESSION_ENDED` for a session that ended. " +
      "The tunnel's opening and closing are events (`tunnel_opened`, `tunnel_closed`).",
    caller: "person",
    body: connectBody,
    bodyRequired: false,
    responses: { 200: connectAnswer },
  }),
  person("member"),
  async (c) => {
    const body = await readJson(c, connectBody);
    const project = await projectFor(c, c.req.param("id"), "write");
    const { session } = await sessionIn(c, project.id, c.req.param("sid"));
    const user = currentUser(c);
    if (!(await terminalAccess(c.env.DB, user.id, session.serverId, project.id)).write) {
      throw forbidden("Only people who may type in the session's terminal connect to its machine");
    }
    if (isFinalSession(session.status)) throw conflict("The session has ended", "SESSION_ENDED");
    const { token, expiresAt } = await issueConnectToken(c.env, hubBaseUrl(c), {
      userId: user.id,
      projectId: project.id,
      sessionId: session.id,
      serverId: session.serverId,
      targetPort: body.target_port,
    });
    // A retry with the same Idempotency-Key gets the same token back, so the answer is kept only sealed.
    c.set("secretResponse", "sealed");
    return c.json({ token, expires_at: new Date(expiresAt * 1000).toISOString(), command: `orchestratia-connect ${token}` });
  },
);

function refuse(ws: WebSocket, detail: string) {
  try {
    ws.send(JSON.stringify({ type: "auth_error", detail }));
  } catch {
    // The person left.
  }
  closeQuietly(ws, CLOSE_REFUSED, detail);
}

/** The token's tunnel on the session's link, or why not. */
async function joinTunnel(c: HubContext, first: string | ArrayBuffer): Promise<WebSocket | string> {
  let frame: { type?: unknown; token?: unknown };
  try {
    frame = JSON.parse(typeof first === "string" ? first : new TextDecoder().decode(first)) as typeof frame;
  } catch {
    frame = {};
  }
  if (frame?.type !== "auth" || typeof frame.token !== "string") return 'Authenticate first: {"type": "auth", "token": "<connect token>"}';
  const claims: ConnectClaims | string = await verifyConnectToken(c.env, frame.token);
  if (typeof claims === "string") return claims;
  // The person's access may have changed since the token was made.
  if (!(await terminalAccess(c.env.DB, claims.userId, claims.serverId, claims.projectId)).write) return "You may no longer type in this session";
  const res = await linkStub(c.env, claims.serverId).fetch("https://link/tunnel", {
    headers: {
      Upgrade: "websocket",
      "X-Tunnel-Id": crypto.randomUUID(),
      "X-Session-Id": claims.sessionId,
      "X-User-Id": claims.userId,
      "X-Token-Id": claims.tokenId,
      "X-Token-Expires": String(claims.expiresAt),
      "X-Target-Port": String(claims.targetPort),
    },
  });
  if (!res.webSocket) return (await res.text()) || "The tunnel could not be opened";
  res.webSocket.accept();
  return res.webSocket;
}

connectRoutes.socket.get(
  "/",
  documented({
    id: "openTunnelSocket",
    tag: "Sessions",
    summary: "orchestratia-connect's WebSocket",
    description: [
      '**Auth.** The first frame is `{"type": "auth", "token": "<connect token>"}` (from `POST .../sessions/{sid}/connect`), within ' +
        `${AUTH_GRACE_MS / 1000} s. The hub answers \`{"type": "auth_ok", "tunnel_id"}\` once the session's daemon was asked to open the port, ` +
        `or \`{"type": "auth_error", "detail"}\` and closes with ${CLOSE_REFUSED}: an invalid or expired token, one used already, a session ` +
        "that ended or is not on the token's server any more, a person who may no longer type in it, a daemon that is not connected " +
        "(the token is not spent then).",
      '**Frames.** Both ways `{"type": "tunnel_data", "data": "<base64>"}`; the hub ends with `{"type": "tunnel_close", "reason"}` when the ' +
        "daemon's connection ends, the port refused it, or the daemon left.",
    ].join("\n\n"),
    caller: "anyone",
    headers: { Upgrade: "`websocket`" },
    responses: { 101: { description: "The tunnel's WebSocket is open; authenticate with the first frame" } },
  }),
  (c) => {
    requireUpgrade(c);
    const { 0: client, 1: person } = new WebSocketPair();
    person.accept();
    relayAfterFirstFrame(person, {
      graceMs: AUTH_GRACE_MS,
      late: `No token within ${AUTH_GRACE_MS / 1000} s`,
      failed: "The hub could not check the token; retry",
      refuse: (detail) => refuse(person, detail),
      join: async (first) => {
        const joined = await joinTunnel(c, first);
        if (typeof joined !== "string") return joined;
        refuse(person, joined);
        return null;
      },
    });
    return new Response(null, { status: 101, webSocket: client });
  },
);
