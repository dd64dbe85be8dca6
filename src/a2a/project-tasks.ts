/**
 * A project's tasks as its A2A agent reads them: the hub's own task rows (no second store), this project's only, as
 * A2A tasks with their questions and the DataRef links the caller may follow.
 */
import type { Task } from "@a2a-js/sdk";
import { RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import { asc, inArray } from "drizzle-orm";
import { linkPointers } from "../datarefs/pointers";
import { d1Of, DIRECTORY } from "../db/shards";
import { dbOf } from "../db/client";
import { interventions } from "../db/schema";
import { taskViews } from "../views/task-queries";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext } from "../http/context";
import { visibilityOf } from "../middleware/dataref-links";
import { isUuid } from "../http/fields";
import type { InterventionRow, TaskView } from "../views/tasks";
import { a2aTaskOf } from "./messages";
import { snapshotOf } from "./room-events";
import { archivedInterventions, archivedTaskEntry, archivedTaskView } from "../archive/reads";

export class ProjectTasks {
  constructor(
    private readonly c: HubContext,
    private readonly projectId: string,
    /** The shard the project's rows live on. */
    private readonly shard: string = DIRECTORY,
  ) {}

  /** A task of this project (any other id is not found here). */
  async read(id: string | undefined): Promise<TaskView> {
    return this.ofProject(id, isUuid(id ?? "") ? ((await taskViews(this.c.var.db, [id!]))[0] ?? (await this.archived(id!))) : undefined);
  }

  /** A task of this project and the seq after which the room's events change it (room-events.ts snapshotOf). */
  async snapshot(id: string | undefined): Promise<{ task: TaskView; since: number }> {
    if (!isUuid(id ?? "")) return { task: this.ofProject(id, undefined), since: 0 };
    // One transaction on the project's shard.
    const d1 = d1Of(this.c.env, this.shard);
    const { task, since } = await snapshotOf(this.c.var.db, d1, this.projectId, id!);
    return { task: this.ofProject(id, task ?? (await this.archived(id!))), since };
  }

  /** The task as it was when it moved to the project's archive (`archived: true`), if it did. */
  private async archived(id: string): Promise<TaskView | undefined> {
    const entry = await this.entryOf(id);
    return entry ? archivedTaskView(this.c.env.BLOBS, entry) : undefined;
  }

  private async entryOf(id: string) {
    const entry = await archivedTaskEntry(this.c.env, id);
    return entry?.project_id === this.projectId ? entry : null;
  }

  private ofProject(id: string | undefined, task: TaskView | undefined): TaskView {
    if (!id) throw new RequestMalformedError("id is required: the task's id");
    if (!task || task.project_id !== this.projectId) throw new TaskNotFoundError(`Task not found: ${id}`);
    return task;
  }

  async interventionsOf(taskIds: string[]): Promise<Map<string, InterventionRow[]>> {
    const byTask = new Map<string, InterventionRow[]>();
    if (taskIds.length === 0) return byTask;
    const rows = await this.c.var.db
      .select()
      .from(interventions)
      .where(inArray(interventions.taskId, taskIds))
      .orderBy(asc(interventions.createdAt), asc(interventions.id));
    for (const row of rows) byTask.set(row.taskId!, [...(byTask.get(row.taskId!) ?? []), row]);
    return byTask;
  }

  async a2aTask(task: TaskView, historyLength?: number): Promise<Task> {
    const questions = task.archived
      ? await archivedInterventions(this.c.env.BLOBS, { key: (await this.entryOf(task.id))!.key, task_id: task.id })
      : ((await this.interventionsOf([task.id])).get(task.id) ?? []);
    return a2aTaskOf(await this.linked(task), questions, historyLength);
  }

  /** The task with a download URL in each DataRef pointer of its result the caller may see, as the REST API answers it. */
  async linked(task: TaskView): Promise<TaskView> {
    if (!task.result) return task;
    const scope = { project: this.projectId, visibility: visibilityOf(this.c), everyShard: true };
    return { ...task, result: (await linkPointers(this.c.env, dbOf(this.c.env.DB), hubBaseUrl(this.c), task.result, scope)) as TaskView["result"] };
  }
}
