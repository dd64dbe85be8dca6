/**
 * Which task a request is about, and whether the caller may see or change it;
 * where large JSON a caller sends for a project goes.
 */
import { eq } from "drizzle-orm";
import { isUuid } from "../http/fields";
import { checkAccess, membershipOf, principalOf, type Access } from "../auth/access";
import { projects, tasks } from "../db/schema";
import { dbOf } from "../db/client";
import { DIRECTORY, rememberedShard, rememberShard, shardDb, shardNames } from "../db/shards";
import type { Principal } from "../auth/principal";
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
    // Its reads before the room go to the project's shard, when this isolate knows it (the room's answer says so after).
    const shard = rememberedShard(known);
    if (shard && shard !== DIRECTORY) c.set("db", shardDb(c.env, shard));
    noteTask(c, taskId, known);
    return { id: taskId, projectId: known };
  }
  const task = (await onDirectory(c, p, taskId)) ?? (await onOtherShards(c, p, taskId));
  if (!task) throw notFound("Task");
  rememberProjectOf(task.id, task.projectId);
  checkAccess(c, task.projectId, task.member, access, "Task");
  noteTask(c, task.id, task.projectId);
  return task;
}

/** A task on the directory's shard (the first), and the caller's membership of its project, in one query. */
async function onDirectory(c: HubContext, p: Principal, taskId: string) {
  const [task] = await dbOf(c.env.DB)
    .select({ id: tasks.id, projectId: tasks.projectId, member: membershipOf(p, tasks.projectId), shard: projects.shard })
    .from(tasks)
    .innerJoin(projects, eq(projects.id, tasks.projectId))
    .where(eq(tasks.id, taskId));
  // A row left behind by a move still under way (its old rows are being deleted): the project's rows are on its shard.
  if (task) rememberShard(task.projectId, task.shard);
  if (task && task.shard !== DIRECTORY) c.set("db", shardDb(c.env, task.shard));
  return task;
}

/**
 * Else every other shard is asked for the id at once (a key lookup each), then the directory for the caller's
 * membership of the project it is in.
 */
async function onOtherShards(c: HubContext, p: Principal, taskId: string) {
  const others = shardNames(c.env).filter((s) => s !== DIRECTORY);
  if (others.length === 0) return undefined;
  const found = await Promise.all(
    others.map((shard) => shardDb(c.env, shard).select({ id: tasks.id, projectId: tasks.projectId }).from(tasks).where(eq(tasks.id, taskId)).get()),
  );
  const at = found.findIndex((t) => t !== undefined);
  const task = found[at];
  if (!task) return undefined;
  // The directory names the project's shard: a copy found elsewhere is one a move has yet to delete.
  const home = await dbOf(c.env.DB)
    .select({ shard: projects.shard, member: membershipOf(p, projects.id) })
    .from(projects)
    .where(eq(projects.id, task.projectId))
    .get();
  if (!home) return undefined;
  const shard = others.includes(home.shard) && found[others.indexOf(home.shard)] ? home.shard : others[at]!;
  // The rest of the request reads the task's rows where they live (the directory stays at c.env.DB).
  c.set("db", shardDb(c.env, shard));
  rememberShard(task.projectId, shard);
  return { ...task, member: home.member };
}

/** The one project a scope names, if it names exactly one. */
const onlyProjectOf = (scope: readonly string[] | null) => (scope?.length === 1 ? scope[0] : undefined);

/** The task (and its project) this request is about, for its log line. */
function noteTask(c: HubContext, taskId: string, projectId: string) {
  c.set("logTask", taskId);
  c.set("logProject", projectId);
}
