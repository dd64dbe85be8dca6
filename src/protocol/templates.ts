/**
 * Request bodies of templates, schedules and triggers (API.md "Templates, schedules and triggers"), and the check a
 * template's tasks pass once their parameters are filled in: the same field rules as a task created one at a time.
 */
import { z } from "zod";
import { label, text } from "../http/fields";
import { taskFields } from "./hub-api";
import { contractKey, DEPENDENCY_TYPES } from "./orchestratia-v1";
import { PARAMETER_TYPES, templateProblems, type TemplateTask } from "../domain/template-params";

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
