/**
 * Instantiating a template: its graph of tasks, their dependencies by key, and the run that records the firing, in
 * one batch (all of it or none). A schedule's slot or a trigger's delivery that already made a run answers that run
 * and writes nothing: the key is unique in D1 too, so a repeat can never make a second graph.
 */
import { and, eq, isNull } from "drizzle-orm";
import { runs, taskDependencies, tasks, templates, type RunRow, type TemplateRow } from "../../db/schema";
import { logHead } from "../../db/task-events";
import { isBlocked } from "../../domain/dependencies";
import { resolveParameters, type ParameterValue } from "../../domain/template-params";
import { graphOf, type GraphTask } from "./template-graph";
import { beginTrace } from "../../protocol/trace-context";
import type { ProblemData, RunOrigin } from "../commands";
import { chunkRows, statement, type EventDraft } from "../statements";
import { recordEvents, type Cmd, type OpContext, type OpOutcome, type WritePlan } from "./kernel";
import { newTaskRow } from "./task-rows";

export async function instantiate(ctx: OpContext, cmd: Cmd<"instantiate">): Promise<OpOutcome> {
  const earlier = await earlierRun(ctx, cmd.run);
  if (earlier) return { taskId: earlier.taskIds[0] ?? "", statements: [], unchanged: true, data: runAnswer(earlier, true) };
  const template = await ctx.db.query.templates.findFirst({ where: and(eq(templates.id, cmd.templateId), eq(templates.projectId, ctx.projectId)) });
  if (!template) return { status: 404, code: "NOT_FOUND", detail: "Template not found" };
  const made = graphFor(template, cmd.parameters, cmd.fromText);
  if ("problem" in made) return made.problem;
  return planGraph(ctx, template, made.values, made.graph, cmd.run);
}

/** The template's graph with `given` resolved and filled in, or the 422 naming the parameter or field that broke. */
export function graphFor(
  template: TemplateRow,
  given: Record<string, unknown>,
  fromText = false,
): { values: Record<string, ParameterValue>; graph: GraphTask[] } | { problem: ProblemData } {
  const resolved = resolveParameters(template.parameters, given, { fromText });
  const failed = (errors: { path: string; message: string }[]): { problem: ProblemData } => ({
    problem: { status: 422, code: "VALIDATION_FAILED", detail: errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors },
  });
  if ("errors" in resolved) return failed(resolved.errors);
  const rendered = graphOf(template.tasks, resolved.values);
  if ("errors" in rendered) return failed(rendered.errors);
  return { values: resolved.values, graph: rendered.graph };
}

/** The run a schedule's slot or a trigger's delivery already made, if any. */
async function earlierRun(ctx: OpContext, run: RunOrigin): Promise<RunRow | undefined> {
  if (run.scheduleId && run.slot) return ctx.db.query.runs.findFirst({ where: and(eq(runs.scheduleId, run.scheduleId), eq(runs.slot, run.slot)) });
  if (run.triggerId && run.deliveryId)
    return ctx.db.query.runs.findFirst({ where: and(eq(runs.triggerId, run.triggerId), eq(runs.deliveryId, run.deliveryId)) });
  return undefined;
}

/** What the caller of a firing is answered: the run, and whether it was made before. */
export const runAnswer = (run: Pick<RunRow, "id" | "taskIds" | "skipped">, repeated = false) => ({
  run_id: run.id,
  task_ids: run.taskIds,
  ...(run.skipped ? { skipped: run.skipped } : {}),
  ...(repeated ? { repeated: true } : {}),
});

/** The run's row for `origin` (a graph made, or a slot skipped with why). */
export function runRow(ctx: OpContext, template: TemplateRow, origin: RunOrigin, values: Record<string, unknown>, taskIds: string[], skipped: string | null) {
  return {
    id: crypto.randomUUID(),
    projectId: ctx.projectId,
    templateId: template.id,
    templateName: template.name,
    source: origin.source,
    scheduleId: origin.scheduleId ?? null,
    slot: origin.slot ?? null,
    triggerId: origin.triggerId ?? null,
    deliveryId: origin.deliveryId ?? null,
    parameters: values,
    taskIds,
    skipped,
    createdBy: ctx.actor.label,
    startedAt: ctx.now,
  };
}

/**
 * The graph's tasks (pending, blocked where a dependency waits on another of them), their dependencies, the run,
 * and the events: each task's task_created, then run_started. The graph shares one trace.
 */
export function planGraph(ctx: OpContext, template: TemplateRow, values: Record<string, ParameterValue>, graph: GraphTask[], origin: RunOrigin): WritePlan {
  const ids = new Map(graph.map((g) => [g.key, crypto.randomUUID()]));
  const run = runRow(
    ctx,
    template,
    origin,
    values,
    graph.map((g) => ids.get(g.key)!),
    null,
  );
  const trace = beginTrace();
  const deps = graph.flatMap((g) =>
    g.dependencies.map((d) => ({
      taskId: ids.get(g.key)!,
      dependsOnTaskId: ids.get(d.on)!,
      projectId: ctx.projectId,
      dependencyType: d.dependency_type,
      contractKey: d.contract_key,
      // Every upstream is new and pending: only a related dependency is resolved as it is written.
      resolved: d.dependency_type === "related",
      resolvedAt: d.dependency_type === "related" ? ctx.now : null,
      createdAt: ctx.now,
    })),
  );
  const rows = graph.map((g) => {
    const id = ids.get(g.key)!;
    const blocked = isBlocked(deps.filter((d) => d.taskId === id));
    return newTaskRow(ctx, id, g.task, { status: "pending", blocked, awaiting: false, trace, origin: {}, runId: run.id });
  });
  const events: EventDraft[] = [
    ...rows.map((row): EventDraft => ({
      type: "task_created",
      taskId: row.id,
      traceparent: trace.traceparent,
      data: { title: row.title, status: row.status, priority: row.priority, blocked: row.blocked, run_id: run.id },
    })),
    ...graph.flatMap((g) => g.task.warnings.map((warning): EventDraft => ({ type: "schema_warning", taskId: ids.get(g.key)!, data: { warning } }))),
    {
      type: "run_started",
      taskId: null,
      data: { run_id: run.id, source: origin.source, template_id: template.id, template_name: template.name, task_ids: run.taskIds, parameters: values },
    },
  ];
  return {
    taskId: run.taskIds[0] ?? "",
    statements: [
      // One statement a task: a task row binds about fifty parameters, and D1 takes a hundred a query.
      ...rows.map((row) => statement(ctx.d1, ctx.db.insert(tasks).values({ ...row, logFrom: logHead(ctx.projectId) }))),
      ...chunkRows(deps, 8).map((chunk) => statement(ctx.d1, ctx.db.insert(taskDependencies).values(chunk))),
      statement(ctx.d1, ctx.db.insert(runs).values(run)),
    ],
    events: recordEvents(ctx, events),
    data: runAnswer(run),
  };
}

/** Whether the run's graph still has a task not finished (a schedule that skips overlaps waits for it). */
export async function runStillOpen(ctx: OpContext, runId: string): Promise<boolean> {
  const open = await ctx.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.runId, runId), isNull(tasks.completedAt)))
    .limit(1);
  return open.length > 0;
}
