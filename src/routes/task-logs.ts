/**
 * What agents logged about a task (the seed's event:log and event:error, kept
 * in agent_logs), newest first, paged by (created_at, id).
 */
import { and, desc, eq, lt, or } from "drizzle-orm";
import { z } from "zod";
import { agentLogs, servers } from "../db/schema";
import { decodeCursor, encodeCursor } from "../domain/page-cursor";
import { readQuery } from "../http/body";
import { fieldError } from "../http/problem";
import { agentLogPage, agentLogView } from "../views/agent-logs";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";
import { readableTask } from "./archived-tasks";

const logQuery = z.object({
  limit: z.coerce.number().int().min(1, "must be at least 1").max(500, "must be at most 500").default(100),
  cursor: z.string().max(500).optional().meta({ description: "A page's `next_cursor`" }),
  level: z.enum(["debug", "info", "warn", "error"], { error: "must be one of debug, info, warn, error" }).optional(),
});

/** GET /:id/logs. */
export function logRoutes({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id/logs",
    describe({
      id: "listTaskLogs",
      summary: "List a task's agent logs",
      description:
        "What agents logged about the task over the agent socket: `event:log` lines naming it (`payload.taskId`) and `event:error` reports, newest first. " +
        "Read access as for the task. `level` keeps one level; `cursor` pages back (422 naming it when it is not one the hub handed out).",
      query: logQuery,
      responses: { 200: agentLogPage },
    }),
    read,
    async (c) => {
      // What agents logged stays in D1 when the task moves to the archive.
      const task = await readableTask(c, taskId(c), () => taskFor(c, taskId(c)));
      const q = readQuery(c, logQuery);
      const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
      if (after === null) throw fieldError("cursor", "is not a cursor this list handed out");
      const rows = await c.var.db
        .select({ log: agentLogs, serverName: servers.name })
        .from(agentLogs)
        .leftJoin(servers, eq(servers.id, agentLogs.serverId))
        .where(
          and(
            eq(agentLogs.taskId, task.id),
            q.level ? eq(agentLogs.level, q.level) : undefined,
            after ? or(lt(agentLogs.createdAt, after[0]), and(eq(agentLogs.createdAt, after[0]), lt(agentLogs.id, after[1]))) : undefined,
          ),
        )
        .orderBy(desc(agentLogs.createdAt), desc(agentLogs.id))
        .limit(q.limit + 1);
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return c.json({
        logs: page.map((r) => agentLogView({ ...r.log, serverName: r.serverName })),
        next_cursor: rows.length > q.limit && last ? encodeCursor(last.log.createdAt, last.log.id) : null,
      });
    },
  );
}
