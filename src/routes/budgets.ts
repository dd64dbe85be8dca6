/**
 * A project's budgets (API.md "Usage, budgets and telemetry"): the project's members and admins set them, anyone who
 * sees the project reads them. Every change goes through the project's room, which spends usage on them and decides
 * their thresholds, so a change takes effect on its next write whatever races it.
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { person } from "../middleware/guards";
import { BUDGET_ACTIONS, BUDGET_PERIODS, BUDGET_SCOPES } from "../db/schema";
import { MAX_BUDGETS } from "../domain/budgets";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid, uuid } from "../http/fields";
import { notFound } from "../http/problem";
import { documented, type Operation } from "../openapi/operation";
import { offerWaitingTasks, runInRoom } from "../room/client";
import { logError } from "../runtime/log";
import { budgetSchema, budgetViews } from "../views/budgets";

export const budgetRoutes = new Hono<HubEnv>();

const threshold = z.object({
  at_percent: z.number("must be a number").min(1, "must be at least 1").max(1000, "must be at most 1000"),
  action: z.enum(BUDGET_ACTIONS, "must be warn, hold or stop"),
});

const actions = z
  .array(threshold, "must be a list of {at_percent, action}")
  .min(1, "must name at least one threshold")
  .max(20, "must name at most 20 thresholds")
  .refine((list) => new Set(list.map((t) => t.at_percent)).size === list.length, "must not name the same at_percent twice");

const limitUsd = z.number("must be a number").positive("must be more than 0").max(1_000_000_000, "must be at most 1000000000");
const limitTokens = z.int("must be a whole number").positive("must be more than 0").max(Number.MAX_SAFE_INTEGER, "is too large");

const createBody = z
  .object({
    scope: z.enum(BUDGET_SCOPES, "must be project or graph"),
    task_id: uuid.nullish().meta({ description: "Scope `graph` only, and required there: the graph's anchor, a task of this project" }),
    period: z.enum(BUDGET_PERIODS, "must be day or month").nullish().meta({ description: "Scope `project` only, and required there" }),
    limit_usd: limitUsd.nullish(),
    limit_tokens: limitTokens.nullish(),
    actions,
  })
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (b.limit_usd != null && b.limit_tokens != null) issue("limit_tokens", "must not be given with limit_usd: a budget has exactly one limit");
    if (b.limit_usd == null && b.limit_tokens == null) issue("limit_usd", "is required, or limit_tokens: a budget has exactly one limit");
    if (b.scope === "graph") {
      if (b.task_id == null) issue("task_id", "is required for a graph budget: the task whose graph it covers");
      if (b.period != null) issue("period", "must be left out for a graph budget: a graph has no period");
    } else {
      if (b.period == null) issue("period", "is required for a project budget: day or month");
      if (b.task_id != null) issue("task_id", "must be left out for a project budget (it covers every task)");
    }
  });

const CHANGEABLE = ["period", "limit_usd", "limit_tokens", "actions"];

const changeBody = z
  .looseObject({
    period: z.enum(BUDGET_PERIODS, "must be day or month").optional().meta({ description: "A project budget's only" }),
    limit_usd: limitUsd.nullable().optional(),
    limit_tokens: limitTokens.nullable().optional(),
    actions: actions.optional(),
  })
  .superRefine((b, ctx) => {
    for (const key of Object.keys(b).filter((k) => !CHANGEABLE.includes(k))) {
      ctx.addIssue({ code: "custom", path: [key], message: `cannot be changed (only ${CHANGEABLE.join(", ")})` });
    }
  });

const RULES =
  "A budget is on the project (`scope: project`, per UTC `day` or `month`) or on a task graph (`scope: graph`: the task `task_id` " +
  "with everything it depends on and everything that depends on it, transitively), in USD (`limit_usd`) or tokens (`limit_tokens`: input, " +
  "output, cache-read and cache-write together), exactly one. Each action is taken once per period as spend reaches `at_percent` of the " +
  "limit: `warn` is an event (`budget_warned`, to webhooks and Telegram); `hold` (`budget_held`) refuses assigning and starting tasks in " +
  "the scope with 409 `BUDGET_HELD` and leaves the running ones a note; `stop` (`budget_stopped`) holds too, and moves running tasks to " +
  "`needs_human` with a question a person answers. A new period, a raise, new actions or deleting the budget releases a held scope " +
  "(`budget_released`). Spend already made counts at once: a budget set over a threshold crosses it as it is set.";

const budgetOperation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Usage and budgets", caller: "person" });

/** The budget named in the path, as its project's room and views know it (a budget of another project is not found). */
const budgetId = (c: HubContext) => {
  const id = c.req.param("bid")!;
  if (!isUuid(id)) throw notFound("Budget");
  return id;
};

/** A scope the change released has waiting tasks to offer again: the room offers them before the change is answered. */
async function offerReleased(c: HubContext, projectId: string, data: Record<string, unknown> | undefined) {
  if (!data?.released) return;
  try {
    await offerWaitingTasks(c.env, [projectId]);
  } catch (e) {
    // The change has committed; the tasks are offered again as servers come and tasks end.
    logError("offering waiting tasks after a budget release failed", { project_id: projectId, operation: "sweep" }, e);
  }
}

async function viewOf(c: HubContext, projectId: string, id: string) {
  const [view] = await budgetViews(c.var.db, projectId, id);
  if (!view) throw notFound("Budget");
  return view;
}

budgetRoutes.post(
  "/:id/budgets",
  budgetOperation({
    id: "createBudget",
    summary: "Set a budget on the project or a task graph",
    description: `Members of the project and admins; viewers get 403. At most ${MAX_BUDGETS} per project.\n\n${RULES}`,
    body: createBody,
    responses: { 201: budgetSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const body = await readJson(c, createBody);
    const graph = body.scope === "graph";
    const result = await runInRoom(c, project.id, {
      op: "create_budget",
      budget: {
        scope: body.scope,
        taskId: graph ? body.task_id! : null,
        period: graph ? null : body.period!,
        limitUsd: body.limit_usd ?? null,
        limitTokens: body.limit_tokens ?? null,
        actions: body.actions,
      },
    });
    return c.json(await viewOf(c, project.id, String(result.data!.budget_id)), 201);
  },
);

budgetRoutes.get(
  "/:id/budgets",
  budgetOperation({
    id: "listBudgets",
    summary: "The project's budgets, oldest first",
    description: "Anyone who sees the project. Each with what it has spent in the period running now, its state and the thresholds crossed.",
    responses: { 200: z.object({ budgets: z.array(budgetSchema) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    return c.json({ budgets: await budgetViews(c.var.db, project.id) });
  },
);

budgetRoutes.get(
  "/:id/budgets/:bid",
  budgetOperation({ id: "getBudget", summary: "A budget of the project", responses: { 200: budgetSchema } }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    return c.json(await viewOf(c, project.id, budgetId(c)));
  },
);

budgetRoutes.patch(
  "/:id/budgets/:bid",
  budgetOperation({
    id: "updateBudget",
    summary: "Change a budget's limit, period or actions",
    description:
      "Members of the project and admins. Fields left out stay; to change a budget's unit, set the other limit to null. Its scope and task " +
      "stay as they were set. Decided in the project's room at once: thresholds the spend now reaches cross, those it no longer reaches " +
      "may cross again later, and a scope no longer held is released (`budget_released`). A new `period` counts what the project spent " +
      "in the period that starts now.",
    body: changeBody,
    responses: { 200: budgetSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const id = budgetId(c);
    const body = await readJson(c, changeBody);
    const result = await runInRoom(c, project.id, {
      op: "change_budget",
      budgetId: id,
      changes: {
        ...(body.period !== undefined ? { period: body.period } : {}),
        ...(body.limit_usd !== undefined ? { limitUsd: body.limit_usd } : {}),
        ...(body.limit_tokens !== undefined ? { limitTokens: body.limit_tokens } : {}),
        ...(body.actions !== undefined ? { actions: body.actions } : {}),
      },
    });
    await offerReleased(c, project.id, result.data);
    return c.json(await viewOf(c, project.id, id));
  },
);

budgetRoutes.delete(
  "/:id/budgets/:bid",
  budgetOperation({
    id: "deleteBudget",
    summary: "Delete a budget",
    description: "Members of the project and admins. A scope it held is released (`budget_released`).",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const result = await runInRoom(c, project.id, { op: "delete_budget", budgetId: budgetId(c) });
    await offerReleased(c, project.id, result.data);
    return c.body(null, 204);
  },
);
