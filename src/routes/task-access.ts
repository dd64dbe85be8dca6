/**
 * Which task a request is about, and whether the caller may see or change it;
 * where large JSON a caller sends for a project goes.
 */
import { eq } from "drizzle-orm";
import { isUuid } from "../http/fields";
import { checkAccess, membershipOf, principalOf, type Access } from "../auth/access";
import { tasks } from "../db/schema";
import type { HubContext } from "../http/context";
import { notFound } from "../http/problem";
import { roomActor } from "../room/client";
import { offloaderFor } from "../middleware/request-offloads";
import { rememberedProjectOf, rememberProjectOf } from "../db/task-projects";

/** Large JSON the caller sends for this project goes to R2 (see datarefs/offload.ts). */
export const offloadFor = (c: HubContext, projectId: string) => offloaderFor(c, projectId, roomActor(c).label);

/**
 * The task, if the caller can see its project (404 otherwise, like a missing
 * one). One query; none for an agent's write to a task whose project this
 * isolate already knows, or whose server serves a single project: the room
 * then reads the task itself, and answers 404 if it is not in its project.
 */
export async function taskFor(c: HubContext, taskId: string, access: Access = "read") {
  if (!isUuid(taskId)) throw notFound("Task");
  const p = principalOf(c);
  const known = access === "write" && p.kind === "server" ? (rememberedProjectOf(taskId) ?? onlyProjectOf(p.server.projectIds ?? null)) : undefined;
  if (known) {
    checkAccess(c, known, null, access, "Task");
    noteTask(c, taskId, known);
    return { id: taskId, projectId: known };
  }
  const [task] = await c.var.db
    .select({ id: tasks.id, projectId: tasks.projectId, member: membershipOf(p, tasks.projectId) })
    .from(tasks)
    .where(eq(tasks.id, taskId));
  if (!task) throw notFound("Task");
  rememberProjectOf(task.id, task.projectId);
  checkAccess(c, task.projectId, task.member, access, "Task");
  noteTask(c, task.id, task.projectId);
  return task;
}

/** The one project a scope names, if it names exactly one. */
const onlyProjectOf = (scope: readonly string[] | null) => (scope?.length === 1 ? scope[0] : undefined);

/** The task (and its project) this request is about, for its log line. */
function noteTask(c: HubContext, taskId: string, projectId: string) {
  c.set("logTask", taskId);
  c.set("logProject", projectId);
}
