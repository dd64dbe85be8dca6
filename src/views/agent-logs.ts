/** Lines an agent logged (event:log, event:error, non-JSON output on its socket), as the API answers them. */
import { z } from "zod";
import type { agentLogs } from "../db/schema";
import { id, timestamp } from "./fields";

export const agentLogSchema = z
  .object({
    id,
    server_id: id,
    server_name: z.string().nullable().meta({ description: "The server's name, while it exists" }),
    task_id: id.nullable(),
    level: z.string().meta({ description: "`debug`, `info`, `warn` or `error`" }),
    message: z.string(),
    context: z.unknown().meta({ description: "What the agent sent beside the message (event:error: `{stack, recoverable}`)" }),
    created_at: timestamp,
  })
  .meta({ id: "AgentLog" });

export const agentLogPage = z.object({
  logs: z.array(agentLogSchema).meta({ description: "Newest first" }),
  next_cursor: z.string().nullable().meta({ description: "The next (older) page's `cursor`; null on the last page" }),
});

export const agentLogView = (row: typeof agentLogs.$inferSelect & { serverName: string | null }): z.infer<typeof agentLogSchema> => ({
  id: row.id,
  server_id: row.serverId,
  server_name: row.serverName,
  task_id: row.taskId,
  level: row.level,
  message: row.message,
  context: row.context ?? null,
  created_at: row.createdAt,
});
