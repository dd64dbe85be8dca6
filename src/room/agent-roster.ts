/** The project's agents as request:query-agents shows them: each server that may work here, with its roles, load and running task. */
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { tasks } from "../db/schema";
import { serverCandidates } from "../db/server-candidates";
import { capabilityNames, rolesOf } from "../domain/matching";
import { seedAgent } from "../protocol/agent-orchestrator-messages";

export async function agentRoster(db: Db, projectId: string) {
  const candidates = await serverCandidates(db, projectId);
  const running = await db
    .select({ id: tasks.id, server: tasks.assignedServerId })
    .from(tasks)
    .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running")));
  return candidates.map((c) =>
    seedAgent({
      id: c.id,
      name: c.name,
      roles: rolesOf(c.capabilities),
      online: c.online,
      activeTasks: c.activeTasks,
      capabilities: c.capabilities ? capabilityNames(c.capabilities) : [],
      currentTask: running.find((t) => t.server === c.id)?.id ?? null,
    }),
  );
}
