/**
 * Agent sessions people start on a server, and their live terminals
 * (API.md "The official daemon's channel and live terminals"). The session
 * is recorded by the project's room; the server's link asks its daemon to
 * start it and relays the terminal.
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor, scopesOverlap } from "../auth/access";
import { currentUser, person } from "../middleware/guards";
import type { SessionRow } from "../db/client";
import { servers, SESSION_ROLES, sessions } from "../db/schema";
import { listSessions } from "../views/session-queries";
import type { AgentType } from "../domain/agent-types";
import { isFinalSession } from "../domain/session-lifecycle";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { agentType, label, text, uuid } from "../http/fields";
import { conflict, forbidden, notFound } from "../http/problem";
import { logError } from "../runtime/log";
import { personOfUpgrade } from "../middleware/upgrade";
import { runInRoom } from "../room/client";
import { linkStub } from "../server-link/client";
import { terminalAccess } from "../server-link/terminal-access";
import { documented } from "../openapi/operation";
import { sessionSchema, sessionView } from "../views/agents";

export const projectSessionRoutes = new Hono<HubEnv>();

const startBody = z.object({
  server_id: uuid,
  name: label(100)
    .regex(/^[A-Za-z0-9][\w.-]*$/, "must start with a letter or digit and hold only letters, digits, '_', '.' and '-'")
    .optional()
    .meta({ description: "Left out: made from the agent type and a random suffix" }),
  working_directory: text(4096).nullish(),
  role: z
    .enum(SESSION_ROLES)
    .default("worker")
    .meta({
      description:
        "`orchestrator`: the daemon gives the agent the governance tools and appends its instructions to the agent's prompt file in the " +
        "working directory (CLAUDE.md, AGENTS.md for codex_cli, GEMINI.md for gemini_cli; none for aider and cursor), a file the repository may track",
    }),
  agent_type: agentType.nullish(),
  cols: z.int("must be an integer").min(20).max(500).default(120).meta({ description: "The terminal's width" }),
  rows: z.int("must be an integer").min(5).max(200).default(40).meta({ description: "The terminal's height" }),
});
const listQuery = z.object({
  status: z.enum(["open", "closed", "all"]).default("all").meta({ description: "`open`: starting or running; `closed`: closed or error" }),
});
const closeQuery = z.object({ mode: z.enum(["close", "kill"]).default("close").meta({ description: "`close` ends the agent gracefully, `kill` at once" }) });
const terminalQuery = z.object({
  access_token: z.string().optional().meta({ description: "The access token, for clients that cannot offer subprotocols" }),
});

/** A name that says what runs there, unique enough not to collide with the server's other open sessions. */
const generatedName = (agent: AgentType | null | undefined) => `${agent ?? "agent"}-${crypto.randomUUID().slice(0, 6)}`;

projectSessionRoutes.post(
  "/:id/sessions",
  documented({
    id: "startSession",
    tag: "Sessions",
    summary: "Start a session",
    description:
      "Start an agent session on a server serving the project.\n\n" +
      [
        "The server's daemon is asked to start the agent in a terminal; the session is `starting` until the daemon answers, then `running`, " +
          "later `closed` or `error`.",
        "404 for a server that does not serve the project (or is revoked). 403 `NOT_ALLOWED` unless the caller is an admin or a member " +
          "of every project the server serves: the agent runs with the server's API key. 409 `DAEMON_OFFLINE` when the server's daemon is " +
          "not connected (or left before the start; the session then ends in `error`); 409 `SESSION_NAME_TAKEN` for a name already open " +
          "on the server.",
      ].join("\n\n"),
    caller: "person",
    body: startBody,
    responses: { 201: sessionSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const body = await readJson(c, startBody);
    const server = await c.var.db.query.servers.findFirst({ where: eq(servers.id, body.server_id) });
    if (!server || server.revokedAt || !scopesOverlap(server.projectIds ?? null, [project.id])) throw notFound("Server serving this project");
    if (!(await terminalAccess(c.env.DB, currentUser(c).id, server.id, project.id)).write) {
      throw forbidden(
        `A session on "${server.name}" runs with the server's API key, which serves projects you are not a member of: an admin can start it`,
        "NOT_ALLOWED",
      );
    }
    const link = linkStub(c.env, server.id);
    const offline = () => conflict(`The daemon of server "${server.name}" is not connected: start it (orchestratia-agent) and try again`, "DAEMON_OFFLINE");
    if (!(await link.connected())) throw offline();
    const { data } = await runInRoom(c, project.id, {
      op: "open_session",
      session: {
        id: crypto.randomUUID(),
        serverId: server.id,
        serverName: server.name,
        name: body.name ?? generatedName(body.agent_type),
        workingDirectory: body.working_directory ?? null,
        agentType: body.agent_type ?? null,
        role: body.role,
        status: "starting",
      },
    });
    const session = data!.session as SessionRow;
    const started = await link
      .startSession({
        sessionId: session.id,
        projectId: project.id,
        serverName: server.name,
        workingDirectory: session.workingDirectory,
        agentType: session.agentType,
        role: session.role,
        cols: body.cols,
        rows: body.rows,
      })
      .catch((e) => {
        logError("starting a session failed", { request_id: c.var.requestId, project_id: project.id, session_id: session.id, operation: "startSession" }, e);
        return false;
      });
    if (!started) {
      // The daemon left between the check and the start (or the link failed): the session is over before it began, and says why.
      await runInRoom(c, project.id, {
        op: "session_status",
        sessionId: session.id,
        serverName: server.name,
        change: { status: "error", error: "The daemon disconnected before the session could start" },
      });
      throw offline();
    }
    return c.json(sessionView(session, server.name), 201);
  },
);

projectSessionRoutes.get(
  "/:id/sessions",
  documented({
    id: "listSessions",
    tag: "Sessions",
    summary: "List sessions",
    description: "The project's sessions, newest first (at most 100).",
    caller: "person",
    query: listQuery,
    responses: { 200: z.object({ sessions: z.array(sessionSchema) }) },
  }),
  person(),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const { status } = readQuery(c, listQuery);
    return c.json({ sessions: await listSessions(c.var.db, [project.id], status === "closed" ? "ended" : status, 100) });
  },
);

/** The project's session with this id, with its server's name; 404 for any other. */
export async function sessionIn(c: HubContext, projectId: string, sessionId: string) {
  const [row] = await c.var.db
    .select({ session: sessions, serverName: servers.name })
    .from(sessions)
    .innerJoin(servers, eq(servers.id, sessions.serverId))
    .where(and(eq(sessions.id, sessionId), eq(sessions.projectId, projectId)));
  if (!row) throw notFound("Session");
  return row;
}

projectSessionRoutes.get(
  "/:id/sessions/:sid",
  documented({ id: "getSession", tag: "Sessions", summary: "A session of the project", caller: "person", responses: { 200: sessionSchema } }),
  person(),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const { session, serverName } = await sessionIn(c, project.id, c.req.param("sid"));
    return c.json(sessionView(session, serverName));
  },
);

/** Closes a session: its daemon ends the agent gracefully, or at once with `?mode=kill`. */
projectSessionRoutes.delete(
  "/:id/sessions/:sid",
  documented({
    id: "closeSession",
    tag: "Sessions",
    summary: "Close a session",
    description:
      "Close a session: its daemon ends the agent.\n\n" +
      "The session is `closed` at once; its daemon is told now, or when it next connects. A session already `closed` or in `error` " +
      "is answered as it is.",
    caller: "person",
    query: closeQuery,
    responses: { 200: sessionSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const { mode } = readQuery(c, closeQuery);
    const { session, serverName } = await sessionIn(c, project.id, c.req.param("sid"));
    if (isFinalSession(session.status)) return c.json(sessionView(session, serverName));
    // The daemon is told first (now, or held until it is back): a session marked closed is one that will stop.
    await linkStub(c.env, session.serverId).endSession(session.id, mode);
    const { data } = await runInRoom(c, project.id, { op: "session_status", sessionId: session.id, serverName, change: { status: "closed" } });
    return c.json(sessionView(data!.session as SessionRow, serverName));
  },
);

/** The session's terminal: a WebSocket on the server's link, for anyone who may see the project; only writers type. */
projectSessionRoutes.get(
  "/:id/sessions/:sid/terminal",
  documented({
    id: "openTerminal",
    tag: "Sessions",
    summary: "Open a terminal",
    description:
      "The session's terminal, as a WebSocket.\n\n" +
      [
        '**Auth.** The person\'s access token as subprotocols `["bearer", "<jwt>"]` (answered with `bearer`) or as `?access_token=`. ' +
          "Anyone who may see the project watches; admins and members of every project the server serves (not viewers) may also type. " +
          "A writer joining an open session has its daemon leave tmux's copy mode (`session_exit_copy_mode`), so it takes keystrokes.",
        '**Server → client.** First `{"type": "ready", "writer", "status"}`, then the recent scrollback and live output as ' +
          '`{"type": "output", "data": "<base64>"}`; `{"type": "status", "status", ...}` when the session changes; `{"type": "screen" | ' +
          '"scrollback", "lines"}` from the daemon; `{"type": "lagging"}` when output is paused for a viewer with more than 1 MiB ' +
          'unacknowledged, `{"type": "resync", "dropped"}` when it resumes; `{"type": "error", "code", "message"}` for a refused frame.',
        '**Client → server.** `{"type": "ack", "bytes"}` for output read; writers only: `{"type": "input", "data": "<base64>"}`, ' +
          '`{"type": "resize", "cols", "rows"}`, and `{"type": "capture"}` to have the daemon capture the whole scrollback (once per 5 s ' +
          "per session), at most 100 of these a second (the rest get `RATE_LIMITED`). A writer's access is checked again before it types " +
          "(at most a second old): one made a viewer, or no longer in every project the server serves, gets `FORBIDDEN` and watches on. " +
          "Frames are at most 256 KiB.",
        "**Close codes.** 4001 the access token expired (connect again with a fresh one), 4004 the session or the person's access to its " +
          "project is gone, 4013 a frame was too large.",
        "Before upgrading: 426 without `Upgrade: websocket`, 401 without a valid token, 404 for a session not in the project.",
      ].join("\n\n"),
    caller: "person",
    query: terminalQuery,
    headers: {
      Upgrade: "`websocket`",
      "Sec-WebSocket-Protocol": "`bearer, <jwt>`: the access token, for browsers (which cannot set `Authorization`)",
    },
    responses: { 101: { description: "The terminal's WebSocket is open" } },
  }),
  async (c) => {
    const { user, expiresAt, subprotocolHeaders } = await personOfUpgrade(c);
    const project = await projectDataFor(c, c.req.param("id"));
    const { session } = await sessionIn(c, project.id, c.req.param("sid"));
    // Asked again by the server's link before the person types, for as long as the terminal stays open.
    const { write: writer } = await terminalAccess(c.env.DB, user.id, session.serverId, project.id);
    return linkStub(c.env, session.serverId).fetch("https://link/terminal", {
      headers: {
        Upgrade: "websocket",
        "X-Session-Id": session.id,
        "X-User-Id": user.id,
        "X-Writer": String(writer),
        "X-Token-Expires": String(expiresAt),
        ...subprotocolHeaders,
      },
    });
  },
);
