/**
 * Schedules, written only by their project's room: a person's create, change (pause, resume) and delete, and the
 * firing of a slot when the room's clock reaches it. The room keeps when each is due (`next_run_at`, the first slot
 * after now; null while paused) and hands that to its alarm. A slot is handled once: the schedule's advance is guarded
 * on the `next_run_at` read, the run of a slot is looked for first, and (schedule, slot) is unique on runs.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { runs, schedules, templates, type ScheduleRow, type TemplateRow } from "../../db/schema";
import { cronProblem, nextSlots, slotDecision } from "../../domain/cron-slots";
import type { ProblemData, RunOrigin, ScheduleFields } from "../commands";
import { statement, type EventDraft } from "../statements";
import { answerOnly, recordEvents, type OpContext, type Planner, type WritePlan } from "./kernel";
import { invalidField, notAllowed } from "./refusals";
import { graphFor, planGraph, runAnswer, runRow, runStillOpen } from "./runs";

const scheduleNotFound: ProblemData = { status: 404, code: "NOT_FOUND", detail: "Schedule not found" };

const peopleOnly = (ctx: OpContext) => (ctx.actor.kind === "person" ? undefined : notAllowed("Only people set up schedules"));

const scheduleOf = (ctx: OpContext, id: string) =>
  ctx.db.query.schedules.findFirst({ where: and(eq(schedules.id, id), eq(schedules.projectId, ctx.projectId)) });

const templateOf = (ctx: OpContext, id: string) =>
  ctx.db.query.templates.findFirst({ where: and(eq(templates.id, id), eq(templates.projectId, ctx.projectId)) });

/** The first slot after `now`, or null while paused (a resumed schedule starts from now: slots passed meanwhile never run). */
const nextRunAt = (s: Pick<ScheduleFields, "cron" | "timezone" | "paused">, now: string) =>
  s.paused ? null : (nextSlots(s.cron, s.timezone, new Date(now), 1)[0] ?? null);

/**
 * Why the schedule could not be saved: its cron or time zone, a template not of the project, or parameters its template
 * would refuse at every firing (422 naming `cron`, `timezone`, `template_id` or `parameters.<name>`).
 */
async function scheduleProblem(ctx: OpContext, s: ScheduleFields): Promise<ProblemData | undefined> {
  const cron = cronProblem(s.cron, s.timezone);
  if (cron) return invalidField(cron.field, cron.message);
  const template = await templateOf(ctx, s.templateId);
  if (!template) return invalidField("template_id", "must be a template of this project");
  const made = graphFor(template, s.parameters);
  return "problem" in made ? made.problem : undefined;
}

/** The row's writes with its event, and its next slot handed to the room's alarm. */
function schedulePlan(ctx: OpContext, row: Pick<ScheduleRow, "id" | "nextRunAt">, write: D1PreparedStatement, data: Record<string, unknown>): WritePlan {
  return {
    taskId: "",
    statements: [write],
    events: recordEvents(ctx, [{ type: "schedule_changed", taskId: null, data: { schedule_id: row.id, ...data } }]),
    leavesTasksAlone: true,
    data: { schedule_id: row.id },
    ...(row.nextRunAt ? { deadline: row.nextRunAt } : {}),
  };
}

/** What a schedule's event says of it. */
const described = (s: ScheduleFields & { nextRunAt: string | null }) => ({
  template_id: s.templateId,
  name: s.name,
  cron: s.cron,
  timezone: s.timezone,
  missed: s.missed,
  overlap: s.overlap,
  paused: s.paused,
  next_run_at: s.nextRunAt,
});

export const createSchedule: Planner<"create_schedule"> = async (ctx, cmd) => {
  const problem = peopleOnly(ctx) ?? (await scheduleProblem(ctx, cmd.schedule));
  if (problem) return problem;
  const row: ScheduleRow = {
    id: crypto.randomUUID(),
    projectId: ctx.projectId,
    ...cmd.schedule,
    lastSlot: null,
    nextRunAt: nextRunAt(cmd.schedule, ctx.now),
    createdBy: ctx.actor.label,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  return schedulePlan(ctx, row, statement(ctx.d1, ctx.db.insert(schedules).values(row)), { change: "created", ...described(row) });
};

export const changeSchedule: Planner<"change_schedule"> = async (ctx, cmd) => {
  const refusal = peopleOnly(ctx);
  if (refusal) return refusal;
  const before = await scheduleOf(ctx, cmd.scheduleId);
  if (!before) return scheduleNotFound;
  const after = { ...before, ...cmd.changes };
  const problem = await scheduleProblem(ctx, after);
  if (problem) return problem;
  // Its slots start again from now when they change or it resumes; otherwise the slot it waits for stays.
  const retimed = after.cron !== before.cron || after.timezone !== before.timezone || after.paused !== before.paused;
  const next = retimed ? nextRunAt(after, ctx.now) : before.nextRunAt;
  const set = { ...cmd.changes, nextRunAt: next, updatedAt: ctx.now };
  const changed = Object.keys(cmd.changes).filter(
    (k) => JSON.stringify(before[k as keyof ScheduleFields]) !== JSON.stringify(after[k as keyof ScheduleFields]),
  );
  const change = after.paused !== before.paused ? (after.paused ? "paused" : "resumed") : "updated";
  const write = statement(ctx.d1, ctx.db.update(schedules).set(set).where(eq(schedules.id, before.id)));
  return schedulePlan(ctx, { id: before.id, nextRunAt: next }, write, { change, changed, ...described({ ...after, nextRunAt: next }) });
};

export const deleteSchedule: Planner<"delete_schedule"> = async (ctx, cmd) => {
  const refusal = peopleOnly(ctx);
  if (refusal) return refusal;
  const before = await scheduleOf(ctx, cmd.scheduleId);
  if (!before) return scheduleNotFound;
  // Its runs stay, naming it: they are the record of what it did.
  const write = statement(ctx.d1, ctx.db.delete(schedules).where(eq(schedules.id, before.id)));
  return schedulePlan(ctx, { id: before.id, nextRunAt: null }, write, { change: "deleted", ...described(before) });
};

/**
 * The slot due at `now`, handled once: the template's graph made, or a run recorded `skipped` with why (`missed`: the
 * room woke too late and the schedule skips missed slots; `overlap`: the previous firing's graph is still open; or why
 * the template no longer instantiates), and the schedule advanced to its next slot, all in one batch.
 */
export const fireSchedule: Planner<"fire_schedule"> = async (ctx, cmd) => {
  const s = await scheduleOf(ctx, cmd.scheduleId);
  if (!s || s.paused || !s.nextRunAt) return answerOnly("", { fired: false });
  const decision = slotDecision({ ...s, nextRunAt: s.nextRunAt }, cmd.now);
  if (!decision) return answerOnly("", { fired: false });
  const advance = statement(
    ctx.d1,
    ctx.db
      .update(schedules)
      .set({ lastSlot: decision.slot, nextRunAt: decision.next })
      .where(and(eq(schedules.id, s.id), eq(schedules.nextRunAt, s.nextRunAt))),
  );
  const origin: RunOrigin = { source: "schedule", scheduleId: s.id, slot: decision.slot };
  const earlier = await ctx.db.query.runs.findFirst({ where: and(eq(runs.scheduleId, s.id), eq(runs.slot, decision.slot)) });
  // The slot made its run before (its advance was lost): the schedule only moves on.
  const plan = earlier ? { ...answerOnly("", runAnswer(earlier, true)), leavesTasksAlone: true as const } : await slotPlan(ctx, s, decision.action, origin);
  return {
    ...plan,
    statements: [advance, ...plan.statements],
    guardedUpdate: 0,
    guardRefusal: { status: 409, code: "CONFLICT", detail: "The schedule's slot was handled meanwhile" },
    ...(decision.next ? { deadline: decision.next } : {}),
    data: { ...plan.data, fired: !earlier, slot: decision.slot, next_run_at: decision.next },
  };
};

async function slotPlan(ctx: OpContext, s: ScheduleRow, action: "fire" | "skip_missed", origin: RunOrigin): Promise<WritePlan> {
  const template = (await templateOf(ctx, s.templateId)) as TemplateRow;
  if (action === "skip_missed") return skippedRun(ctx, template, s, origin, "missed");
  if (s.overlap === "skip" && (await previousStillOpen(ctx, s.id))) return skippedRun(ctx, template, s, origin, "overlap");
  const made = graphFor(template, s.parameters);
  if ("problem" in made) return skippedRun(ctx, template, s, origin, made.problem.detail);
  const plan = planGraph(ctx, template, made.values, made.graph, origin);
  // Tasks with requirements are offered to servers once the batch has committed (schedule-firing.ts).
  return { ...plan, data: { ...plan.data, offer: template.tasks.some((t) => t.requirements) } };
}

/** Whether the schedule's last run that made a graph still has a task not finished. */
async function previousStillOpen(ctx: OpContext, scheduleId: string): Promise<boolean> {
  const previous = await ctx.db.query.runs.findFirst({
    where: and(eq(runs.scheduleId, scheduleId), isNull(runs.skipped)),
    orderBy: [desc(runs.slot)],
    columns: { id: true },
  });
  return previous ? runStillOpen(ctx, previous.id) : false;
}

function skippedRun(ctx: OpContext, template: TemplateRow, s: ScheduleRow, origin: RunOrigin, why: string): WritePlan {
  const run = runRow(ctx, template, origin, s.parameters, [], why);
  const event: EventDraft = {
    type: "run_skipped",
    taskId: null,
    data: { run_id: run.id, source: "schedule", schedule_id: s.id, slot: origin.slot, template_id: template.id, template_name: template.name, skipped: why },
  };
  return {
    taskId: "",
    statements: [statement(ctx.d1, ctx.db.insert(runs).values(run))],
    events: recordEvents(ctx, [event]),
    leavesTasksAlone: true,
    data: runAnswer(run),
  };
}
