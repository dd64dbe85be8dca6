/** Adding and removing a pending task's dependencies on other tasks of its project. */
import { z } from "zod";
import { dependenciesOf } from "../views/task-queries";
import { readJson } from "../http/body";
import { runInRoom } from "../room/client";
import { id } from "../views/fields";
import { dependencySchema as taskDependencySchema, dependencyView } from "../views/tasks";
import { dependencySchema } from "../protocol/orchestratia-v1";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";

const removedDependency = z.object({ removed: z.literal(true), task_id: id, depends_on_task_id: id });

/** POST /:id/dependencies, DELETE /:id/dependencies/:upstreamId. */
export function dependencyRoutes({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/dependencies",
    describe({
      id: "addTaskDependency",
      summary: "Add a dependency",
      description:
        "Make the task depend on another task of its project.\n\n" +
        "Only while the task is `pending` (otherwise 409 `TASK_IMMUTABLE`). An `input` dependency needs the upstream result's `contract_key`. " +
        "A dependency that would close a cycle is 409 `DEPENDENCY_CYCLE`; an upstream not in the project is 422.",
      body: dependencySchema,
      responses: { 201: taskDependencySchema },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const body = await readJson(c, dependencySchema);
      await runInRoom(c, task.projectId, { op: "add_dependency", taskId: task.id, dependency: body });
      const dep = (await dependenciesOf(c.var.db, [task.id])).find((d) => d.dependsOnTaskId === body.depends_on_task_id)!;
      return c.json(dependencyView(dep), 201);
    },
  );
  r.delete(
    "/:id/dependencies/:upstreamId",
    describe({
      id: "removeTaskDependency",
      summary: "Remove a dependency",
      description:
        "Remove one of the task's dependencies.\n\n" +
        "Only while the task is `pending` (otherwise 409 `TASK_IMMUTABLE`). A task it leaves unblocked may be auto-assigned at once.",
      responses: { 200: removedDependency },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const upstreamId = c.req.param("upstreamId");
      await runInRoom(c, task.projectId, { op: "remove_dependency", taskId: task.id, dependsOnTaskId: upstreamId });
      return c.json({ removed: true as const, task_id: task.id, depends_on_task_id: upstreamId });
    },
  );
}
