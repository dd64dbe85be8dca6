/**
 * Live connections: dashboards' WebSockets on a project's room. The Worker
 * checks the JWT and the project's visibility before the room is touched.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { projects } from "../db/schema";
import { parseWith } from "../http/body";
import { isUuid, seqQuery } from "../http/fields";
import { projectFor } from "../auth/access";
import type { HubEnv } from "../http/context";
import { personOfUpgrade, requireUpgrade } from "../middleware/upgrade";
import { hubBaseUrl } from "../http/base-url";
import { notFound, unauthorized } from "../http/problem";
import { apiKeyOf, serverForApiKey } from "../middleware/guards";
import { roomStub } from "../room/client";
import { documented } from "../openapi/operation";
import { z } from "zod";

export const liveRoutes = new Hono<HubEnv>();

const dashboardQuery = z.object({
  since: seqQuery.optional().meta({ description: "Replay every event after this seq before going live (as a first `resume` would)" }),
  access_token: z.string().optional().meta({ description: "The access token, when it is not sent as subprotocols" }),
});

const DASHBOARD_PROTOCOL = `The project's events, live. **Auth**: the access token (not an \`Authorization\` header) as subprotocols \`["bearer", "<jwt>"]\` (the hub answers \`bearer\`) or \`?access_token=\`; checked before upgrading, as is the project (404 when the caller cannot see it).

**Hub → client**: \`{"type": "event", ...Event, "event_type"}\` for each event in seq order (\`event_type\` is the event's own type); \`{"type": "resumed", "last_seq"}\` when a replay has caught up; \`{"type": "resync_required", "since", "head", "detail"}\` when more than 5000 events are missed (page \`GET /events\`, then resume; nothing live is sent until that resume, whose replay brings what committed meanwhile); \`{"type": "auth_ok", "expires_at"}\`; \`{"type": "error", "code", "message"}\`.

**Client → hub**: \`{"type": "resume", "since": N}\`: every event after N before live ones, none twice, none skipped; \`{"type": "auth", "access_token"}\`: a fresh token keeps the socket open past the first one's expiry. At most 20 frames a second.

**Close codes**: 4001 the access token expired (reconnect with a fresh one); 4003 access to the project was revoked; 4004 the project was deleted.`;

liveRoutes.get(
  "/:id/ws",
  documented({
    id: "openProjectEventSocket",
    tag: "Live",
    summary: "Open an event socket",
    description: "A dashboard's WebSocket: the project's events, live and resumable.\n\n" + DASHBOARD_PROTOCOL,
    caller: "person",
    query: dashboardQuery,
    headers: {
      Upgrade: "`websocket` (else 426 `UPGRADE_REQUIRED`)",
      "Sec-WebSocket-Protocol": "`bearer, <jwt>`: the access token, for clients that cannot set headers (browsers)",
    },
    responses: { 101: { description: "The WebSocket is open; frames as described above" } },
  }),
  async (c) => {
    const { user, expiresAt, subprotocolHeaders } = await personOfUpgrade(c);
    const project = await projectFor(c, c.req.param("id"));
    const since = parseWith(dashboardQuery.shape.since, c.req.query("since"), "query.since");
    return roomStub(c.env, project.id).fetch("https://room/dashboard", {
      headers: {
        Upgrade: "websocket",
        "X-User-Id": user.id,
        "X-Token-Expires": String(expiresAt),
        ...subprotocolHeaders,
        ...(since !== undefined ? { "X-Resume-Since": String(since) } : {}),
      },
    });
  },
);

const AGENT_PROTOCOL = `The message protocol of \`seeds/agent-orchestrator-messages.md\`, as JSON text frames \`{type, id, timestamp, payload}\` (\`traceparent\` optional).

**Auth**: the API key in \`X-API-Key\` (or \`Authorization: Bearer orc_...\`), checked before upgrading (401 \`INVALID_API_KEY\`; 404 for a project the server may not work in); or, without one, a first message \`{"type": "auth", "api_key": "orc_...", "protocol_versions"?: ["orchestratia/v1"]}\` within 10 s, answered by \`{"type": "auth_ok", "protocol_version", "warnings"?}\` (a wrong key gets \`response:error\` \`UNAUTHORIZED\` and close 4003). An \`auth\` frame on a socket the header opened declares the versions alone. Versions neither the frame nor the registration declared are taken as \`orchestratia/v1\`, with a warning; \`[]\` or none the hub speaks is \`response:error\` \`INVALID_REQUEST\` (\`details.problem: "INCOMPATIBLE_PROTOCOL"\`) and close 4005.

**Agent → hub**: requests \`request:query-agents\`, \`request:query-tasks\`, \`request:submit-task\`, \`request:get-task\`, \`request:ask-user\`, \`request:subscribe-task\`, \`request:unsubscribe-task\`, each answered by \`response:success\` \`{correlationId, payload}\` or \`response:error\` \`{correlationId, error: {code, message, details?}}\`, \`correlationId\` being the request's \`id\` (a repeated \`id\` gets the same answer); events \`event:progress\`, \`event:log\`, \`event:error\`, \`event:question\` (no answer unless refused). A non-JSON frame is kept as a log line.

Every message needs a string \`type\`; \`id\` is a string (required by \`request:submit-task\` and \`request:ask-user\`), \`timestamp\` ISO-8601; a refusal of a bad one names the field and answers to any string \`id\`.

**Hub → agent**: \`notify:task-assigned\`, \`notify:task-cancelled\`, \`notify:task-event\` (subscribed tasks), \`notify:shutdown\` \`{gracePeriod, reason}\` before the hub closes the socket, and \`notify:ping\` \`{silenceLimitMs}\` every 30 s (\`AGENT_PING_SECONDS\`): any frame answers it — \`{"type": "ping"}\` is answered \`{"type": "pong"}\` without waking the room, \`{"type": "pong"}\` needs no answer.

**Close codes**: 4003 no valid key within 10 s, another message before \`auth\`, or a key refused; 4004 the key was revoked or replaced, or the project deleted; 4005 the declared protocol versions are not spoken here; 4008 nothing heard from the agent for 90 s (\`AGENT_SILENCE_SECONDS\`).`;

/**
 * Agents' sockets: the API key in X-API-Key (or Authorization: Bearer orc_...)
 * is checked here; without one, the room expects {"type":"auth","api_key"}
 * as the first message.
 */
liveRoutes.get(
  "/:id/agent-ws",
  documented({
    id: "openAgentSocket",
    tag: "Live",
    summary: "Open an agent socket",
    description: "An agent's WebSocket on a project: the agent↔orchestrator message protocol.\n\n" + AGENT_PROTOCOL,
    caller: ["agent", "anyone"],
    headers: { Upgrade: "`websocket` (else 426 `UPGRADE_REQUIRED`)" },
    responses: { 101: { description: "The WebSocket is open; messages as described above" } },
  }),
  async (c) => {
    requireUpgrade(c);
    const projectId = c.req.param("id");
    const apiKey = apiKeyOf(c);
    const headers: Record<string, string> = { Upgrade: "websocket", "X-Hub-Base": hubBaseUrl(c) };
    if (apiKey) {
      const server = await serverForApiKey(c, apiKey);
      if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
      c.set("principal", { kind: "server", server });
      await projectFor(c, projectId);
      Object.assign(headers, { "X-Server-Id": server.id, "X-Server-Name": server.name, "X-Key-Hash": server.apiKeyHash! });
    } else if (!isUuid(projectId) || !(await c.var.db.query.projects.findFirst({ columns: { id: true }, where: eq(projects.id, projectId) }))) {
      // Who is asking is learnt only from the first message, but no room is woken for a project that does not exist.
      throw notFound("Project");
    }
    const answer = await roomStub(c.env, projectId).fetch("https://room/agent", { headers });
    // The room refuses a key revoked while this request was on its way; the refusal is a problem like every other.
    if (answer.status === 401) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
    return answer;
  },
);
