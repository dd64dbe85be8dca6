/** Dependencies added and removed after creation: same project only, never a cycle, and only while the task is pending (compute protocol). */
import { and, eq, sql } from "drizzle-orm";
import { dependencyResolved, taskDependencies, tasks } from "../../db/schema";
import { isBlocked, resolveDependency } from "../../domain/dependencies";
import { cycleThrough, type Edge } from "../../domain/dependency-graph";
import { FINISHED } from "../../domain/lifecycle";
import { statement } from "../statements";
import { assignmentEvents, assignmentStatements, filledServers, planAutoAssign } from "./assignment";
import { loadTask, recordEvents, type Cmd, type OpContext, type OpOutcome } from "./kernel";
import { dependencyCycle, invalidField, notFound, taskImmutable } from "./refusals";
import { isDispatched } from "../../protocol/compute-protocol";

export async function addDependency(ctx: OpContext, cmd: Cmd<"add_dependency">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (isDispatched(task.status)) return taskImmutable(task.status, ["dependencies"]);
  const upstream = await loadTask(ctx, cmd.dependency.depends_on_task_id);
  if (!upstream) {
    return invalidField("depends_on_task_id", "no such task in this project");
  }
  const cycle = cycleThrough(await edgesFrom(ctx, upstream.id), task.id, upstream.id);
  if (cycle) {
    return dependencyCycle(cycle);
  }
  const { dependency_type: type, contract_key } = cmd.dependency;
  const resolution = resolveDependency(type, contract_key ?? null, upstream);
  const row = {
    taskId: task.id,
    dependsOnTaskId: upstream.id,
    projectId: ctx.projectId,
    dependencyType: type,
    contractKey: contract_key ?? null,
    resolved: resolution.resolved,
    resolvedAt: resolution.resolved ? ctx.now : null,
    createdAt: ctx.now,
  };
  const { projectId: _p, taskId: _t, dependsOnTaskId: _d, createdAt: _c, ...changes } = row;
  return {
    taskId: task.id,
    statements: [
      statement(
        ctx.d1,
        ctx.db
          .insert(taskDependencies)
          .values(row)
          .onConflictDoUpdate({ target: [taskDependencies.taskId, taskDependencies.dependsOnTaskId], set: changes }),
      ),
    ],
    events: recordEvents(ctx, [
      {
        type: "dependency_added",
        taskId: task.id,
        data: { depends_on_task_id: upstream.id, dependency_type: type, contract_key: contract_key ?? null, resolved: resolution.resolved },
      },
    ]),
  };
}

/** The edges out of every task `taskId` depends on, itself included, however indirectly: all a cycle through it can use. */
async function edgesFrom(ctx: OpContext, taskId: string): Promise<Edge[]> {
  // CROSS JOIN keeps SQLite from scanning the dependencies for each task reached rather than looking its own up.
  return ctx.db.all<Edge>(sql`WITH RECURSIVE upstream(id) AS (
      SELECT ${taskId}
      UNION SELECT d.depends_on_task_id FROM upstream u CROSS JOIN task_dependencies d ON d.task_id = u.id AND d.project_id = ${ctx.projectId})
    SELECT d.task_id AS taskId, d.depends_on_task_id AS dependsOnTaskId
    FROM upstream u CROSS JOIN task_dependencies d ON d.task_id = u.id AND d.project_id = ${ctx.projectId}`);
}

export async function removeDependency(ctx: OpContext, cmd: Cmd<"remove_dependency">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (isDispatched(task.status)) return taskImmutable(task.status, ["dependencies"]);
  const deps = await ctx.db
    .select({
      dependsOnTaskId: taskDependencies.dependsOnTaskId,
      dependencyType: taskDependencies.dependencyType,
      resolved: sql.raw(dependencyResolved("task_dependencies", "tasks")).mapWith(Boolean),
    })
    .from(taskDependencies)
    .innerJoin(tasks, eq(tasks.id, taskDependencies.dependsOnTaskId))
    .where(eq(taskDependencies.taskId, task.id));
  const removed = deps.find((d) => d.dependsOnTaskId === cmd.dependsOnTaskId);
  if (!removed) return notFound("Dependency");
  const rest = deps.filter((d) => d !== removed);
  const unblocks = isBlocked(deps) && !isBlocked(rest) && !FINISHED.includes(task.status);
  const assignments = unblocks ? await planAutoAssign(ctx, [task.id], null) : [];
  return {
    taskId: task.id,
    statements: [
      statement(
        ctx.d1,
        ctx.db.delete(taskDependencies).where(and(eq(taskDependencies.taskId, task.id), eq(taskDependencies.dependsOnTaskId, removed.dependsOnTaskId))),
      ),
      ...assignmentStatements(ctx, assignments, null),
    ],
    fills: filledServers(assignments),
    events: recordEvents(ctx, [
      { type: "dependency_removed", taskId: task.id, data: { depends_on_task_id: removed.dependsOnTaskId, dependency_type: removed.dependencyType } },
      ...(unblocks ? [{ type: "task_unblocked" as const, taskId: task.id, data: { resolved_by: null } }] : []),
      ...assignmentEvents(assignments),
    ]),
  };
}
