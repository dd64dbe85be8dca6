/**
 * Request bodies of templates, schedules and triggers (API.md "Templates, schedules and triggers"), and the check a
 * template's tasks pass once their parameters are filled in: the same field rules as a task created one at a time.
 */
import { z } from "zod";
import { label, text } from "../http/fields";
import { type FieldError, zodFieldErrors } from "./field-errors";
import { checkTaskProtocol, taskFields } from "./hub-api";
import { contractKey, DEPENDENCY_TYPES } from "./orchestratia-v1";
import { PARAMETER_TYPES, renderTasks, templateProblems, type ParameterValue, type TemplateTask } from "../domain/template-params";
import { newTask, type NewTask } from "../room/commands";

const key = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, "must be letters, digits, underscores or dashes")
  .max(100, "must be at most 100 characters");
const parameterName = z
  .string()
  .regex(/^[A-Za-z_][\w.-]*$/, "must start with a letter or underscore, then letters, digits, underscores, dots or dashes")
  .max(100, "must be at most 100 characters");
const parameterValue = z.union([z.string().max(10_000, "must be at most 10000 characters"), z.number(), z.boolean()], {
  error: "must be a string, number or boolean",
});

export const templateParameterSchema = z
  .strictObject({
    name: parameterName,
    type: z.enum(PARAMETER_TYPES, { error: "must be one of string, number, boolean" }),
    required: z.boolean().optional(),
    default: parameterValue.optional(),
    description: text(500).optional(),
  })
  .meta({ id: "TemplateParameter" });

const templateDependency = z
  .strictObject({
    on: key,
    dependency_type: z.enum(DEPENDENCY_TYPES, { error: "must be one of blocks, input, related" }).default("blocks"),
    contract_key: contractKey.nullish(),
  })
  .refine((d) => d.dependency_type !== "input" || d.contract_key, { message: "an input dependency names its contract_key", path: ["contract_key"] });

/** A template's task: the create body's fields (string fields may hold `{{name}}`), keyed, with dependencies by key. */
export const templateTaskSchema = z
  .strictObject({
    key,
    title: taskFields.title,
    spec: taskFields.spec.optional(),
    type: taskFields.type.optional(),
    priority: taskFields.priority.optional(),
    target_repo: taskFields.target_repo,
    target_branch: taskFields.target_branch,
    acceptance_criteria: taskFields.acceptance_criteria.optional(),
    requirements: taskFields.requirements,
    require_plan: taskFields.require_plan.optional(),
    timeout_seconds: taskFields.timeout_seconds,
    dependencies: z.array(templateDependency).max(100).optional(),
  })
  .meta({ id: "TemplateTask" });

export const templateBody = z
  .strictObject({
    name: label(200),
    description: text(2000).nullish(),
    parameters: z.array(templateParameterSchema).max(50, "must hold at most 50 parameters").default([]),
    tasks: z.array(templateTaskSchema).min(1, "must hold at least one task").max(100, "must hold at most 100 tasks"),
  })
  .superRefine((t, ctx) => {
    for (const p of templateProblems(t.parameters, t.tasks as TemplateTask[])) ctx.addIssue({ code: "custom", path: p.path.split("."), message: p.message });
  });
export type TemplateBody = z.infer<typeof templateBody>;

export const parametersBody = z.record(parameterName, z.unknown(), { error: "must be an object" }).default({});

export const instantiateBody = z.strictObject({ parameters: parametersBody }).meta({ id: "InstantiateTemplate" });

/** A rendered task as the room creates it, with its dependencies still by key. */
export interface GraphTask {
  key: string;
  task: NewTask;
  dependencies: { on: string; dependency_type: (typeof DEPENDENCY_TYPES)[number]; contract_key: string | null }[];
}

/**
 * The template's tasks with `values` filled in, each checked as a create would check it; errors name
 * `tasks.<index>.<field>` and what the filled-in value broke.
 */
export function graphOf(tasks: readonly TemplateTask[], values: Record<string, ParameterValue>): { graph: GraphTask[] } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const graph: GraphTask[] = [];
  renderTasks(tasks, values).forEach((rendered, i) => {
    const parsed = templateTaskSchema.safeParse(rendered);
    if (!parsed.success) return void errors.push(...zodFieldErrors(parsed.error, `tasks.${i}`));
    const t = parsed.data;
    const check = checkTaskProtocol({ requirements: t.requirements ?? null });
    if (!check.ok) return void errors.push(...check.errors.map((e) => ({ ...e, path: `tasks.${i}.${e.path}` })));
    graph.push({
      key: t.key,
      task: newTask({
        title: t.title,
        spec: t.spec ?? "",
        type: t.type ?? "feature",
        priority: t.priority ?? "normal",
        targetRepo: t.target_repo ?? null,
        targetBranch: t.target_branch ?? null,
        acceptanceCriteria: t.acceptance_criteria ?? [],
        requirements: t.requirements ?? null,
        requirePlan: t.require_plan ?? false,
        timeoutSeconds: t.timeout_seconds ?? null,
        warnings: check.warnings,
      }),
      dependencies: (t.dependencies ?? []).map((d) => ({ on: d.on, dependency_type: d.dependency_type, contract_key: d.contract_key ?? null })),
    });
  });
  return errors.length ? { errors } : { graph };
}
