/** A graph just made is offered to servers at once when any of its tasks names requirements to match them by. */
import type { TemplateRow } from "../db/schema";
import { offerWaitingTasks } from "./client";
import type { WorkerEnv } from "../runtime/worker-env";
import { logError } from "../runtime/log";

export async function offerGraph(env: WorkerEnv, projectId: string, template: Pick<TemplateRow, "tasks">) {
  if (!template.tasks.some((t) => t.requirements)) return;
  try {
    await offerWaitingTasks(env, [projectId]);
  } catch (e) {
    // The graph has committed; its tasks are offered again as servers come and tasks end.
    logError("offering a new graph's tasks failed", { project_id: projectId, operation: "sweep" }, e);
  }
}
