/** A usage block an agent sent with its work, counted on the task through the project's room (its usage intake). */
import { eq } from "drizzle-orm";
import { sessions } from "../db/schema";
import { pointsOfBlock, type UsageBlock } from "../domain/usage";
import type { HubContext } from "../http/context";
import { roomStub } from "../room/client";
import type { TaskView } from "../views/tasks";

export async function recordUsageBlock(c: HubContext, task: TaskView, block: UsageBlock) {
  const sessionId = task.target_session_id;
  const session = sessionId ? await c.var.db.query.sessions.findFirst({ where: eq(sessions.id, sessionId), columns: { agentType: true } }) : undefined;
  const p = c.var.principal;
  const serverId = p?.kind === "server" ? p.server.id : task.assigned_server_id;
  const points = pointsOfBlock(block, { taskId: task.id, sessionId, serverId, agentType: session?.agentType ?? null }, new Date().toISOString());
  if (points.length > 0) await roomStub(c.env, task.project_id).recordUsage(points);
}
