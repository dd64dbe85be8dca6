/**
 * Agent sessions' lifecycle: opened by a person (the daemon starts it) or by
 * an agent registering itself, then moved on by what the daemon reports or by
 * a close. Each change and its event commit together, so a dashboard that
 * resumes sees every session change exactly once.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { OPEN_SESSION_STATUSES, sessions, type SessionStatus } from "../../db/schema";
import type { SessionRow } from "../../db/client";
import { isFinalSession, sessionEventOf } from "../../domain/session-lifecycle";
import type { Cmd, OpContext, OpOutcome } from "./kernel";
import { answerOnly, recordEvents } from "./kernel";
import type { ProblemData } from "../commands";
import { statement } from "../statements";

const nameTaken = (name: string): ProblemData => ({
  status: 409,
  code: "SESSION_NAME_TAKEN",
  detail: `This server already has an open session named "${name}"`,
});

const sessionNotFound: ProblemData = { status: 404, code: "NOT_FOUND", detail: "Session not found" };

const eventData = (row: Pick<SessionRow, "id" | "name" | "serverId" | "status" | "exitCode" | "error" | "mcpStatus">, serverName: string) => ({
  session_id: row.id,
  session_name: row.name,
  server_id: row.serverId,
  server_name: serverName,
  status: row.status,
  ...(row.exitCode !== null ? { exit_code: row.exitCode } : {}),
  ...(row.error !== null ? { error: row.error } : {}),
  ...(row.mcpStatus !== null ? { mcp_status: row.mcpStatus } : {}),
});

export const openSession = async (ctx: OpContext, cmd: Cmd<"open_session">): Promise<OpOutcome> => {
  const s = cmd.session;
  const taken = await ctx.db.query.sessions.findFirst({
    columns: { id: true },
    where: and(eq(sessions.serverId, s.serverId), eq(sessions.name, s.name), inArray(sessions.status, OPEN_SESSION_STATUSES)),
  });
  if (taken) return nameTaken(s.name);
  const row: SessionRow = {
    id: s.id,
    serverId: s.serverId,
    projectId: ctx.projectId,
    name: s.name,
    workingDirectory: s.workingDirectory,
    agentType: s.agentType,
    role: s.role,
    status: s.status,
    pid: null,
    tmuxName: null,
    exitCode: null,
    error: null,
    createdAt: ctx.now,
    updatedAt: ctx.now,
    closedAt: null,
    mcpStatus: null,
    lastOutputAt: null,
  };
  // Rooms of other projects may open a session of the same name on the same server meanwhile: the insert checks again.
  const insert = statement(
    ctx.d1,
    sql`INSERT INTO sessions (id, server_id, project_id, name, working_directory, agent_type, role, status, created_at, updated_at)
        SELECT ${row.id}, ${row.serverId}, ${row.projectId}, ${row.name}, ${row.workingDirectory}, ${row.agentType}, ${row.role}, ${row.status}, ${ctx.now}, ${ctx.now}
        WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE server_id = ${row.serverId} AND name = ${row.name} AND status IN ('starting', 'running'))
        RETURNING id`,
  );
  return {
    taskId: "",
    guardedUpdate: 0,
    guardRefusal: nameTaken(s.name),
    data: { session: row },
    statements: [insert],
    events: recordEvents(ctx, [{ type: "session_created", taskId: null, data: eventData(row, s.serverName) }], { sessionId: row.id, updatedAt: ctx.now }),
  };
};

/**
 * A session a person closed is closed at once, before its agent has exited: the daemon's `session_closed` that follows
 * still brings the exit code, once.
 */
const exitAfterClose = (row: SessionRow, c: Cmd<"session_status">["change"]) =>
  row.status === "closed" && row.exitCode === null && c.status === "closed" && c.exitCode !== undefined && c.exitCode !== null;

/**
 * Moves a session on. A session that has ended stays ended: a daemon that
 * reports it alive again (after a close it had not heard of) changes nothing.
 */
export const changeSession = async (ctx: OpContext, cmd: Cmd<"session_status">): Promise<OpOutcome> => {
  const row = await ctx.db.query.sessions.findFirst({ where: and(eq(sessions.id, cmd.sessionId), eq(sessions.projectId, ctx.projectId)) });
  if (!row) return sessionNotFound;
  const c = cmd.change;
  const exited = exitAfterClose(row, c);
  if (!exited && (isFinalSession(row.status) || (row.status === c.status && c.pid === undefined)))
    return { ...answerOnly("", { session: row }), unchanged: true };
  const next: SessionRow = exited
    ? { ...row, exitCode: c.exitCode!, updatedAt: ctx.now }
    : {
        ...row,
        status: c.status,
        pid: c.pid ?? row.pid,
        tmuxName: c.tmuxName ?? row.tmuxName,
        workingDirectory: row.workingDirectory ?? c.workingDirectory ?? null,
        exitCode: c.exitCode ?? row.exitCode,
        error: c.error ?? row.error,
        updatedAt: ctx.now,
        closedAt: isFinalSession(c.status) ? ctx.now : null,
      };
  const update = statement(
    ctx.d1,
    ctx.db
      .update(sessions)
      .set({ status: next.status, pid: next.pid, tmuxName: next.tmuxName, workingDirectory: next.workingDirectory, exitCode: next.exitCode, error: next.error, updatedAt: next.updatedAt, closedAt: next.closedAt })
      .where(and(eq(sessions.id, row.id), eq(sessions.status, row.status), eq(sessions.updatedAt, row.updatedAt)))
      .returning({ id: sessions.id }),
  );
  // The exit code is told as the close is: dashboards and the log keep the last `session_closed`'s `exit_code`.
  const type = exited ? "session_closed" : sessionEventOf(row.status as SessionStatus, next.status as SessionStatus);
  return {
    taskId: "",
    guardedUpdate: 0,
    data: { session: next, previous_status: row.status },
    statements: [update],
    events: recordEvents(ctx, type ? [{ type, taskId: null, data: eventData(next, cmd.serverName) }] : [], { sessionId: row.id, updatedAt: ctx.now }),
  };
};

/**
 * What the session's daemon did with the agent's MCP configuration (it reports this on every start). Kept whatever
 * the session's status, as the daemon may report after a quick end; the same report again changes nothing.
 */
export const reportMcpStatus = async (ctx: OpContext, cmd: Cmd<"session_mcp_status">): Promise<OpOutcome> => {
  const row = await ctx.db.query.sessions.findFirst({ where: and(eq(sessions.id, cmd.sessionId), eq(sessions.projectId, ctx.projectId)) });
  if (!row) return sessionNotFound;
  if (row.mcpStatus === cmd.mcpStatus) return { ...answerOnly("", { session: row }), unchanged: true };
  const next: SessionRow = { ...row, mcpStatus: cmd.mcpStatus, updatedAt: ctx.now };
  const update = statement(
    ctx.d1,
    ctx.db
      .update(sessions)
      .set({ mcpStatus: next.mcpStatus, updatedAt: next.updatedAt })
      .where(and(eq(sessions.id, row.id), eq(sessions.updatedAt, row.updatedAt)))
      .returning({ id: sessions.id }),
  );
  return {
    taskId: "",
    guardedUpdate: 0,
    data: { session: next },
    statements: [update],
    events: recordEvents(ctx, [{ type: "session_mcp_status", taskId: null, data: eventData(next, cmd.serverName) }], { sessionId: row.id, updatedAt: ctx.now }),
  };
};
