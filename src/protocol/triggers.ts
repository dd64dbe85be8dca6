/**
 * Request bodies of inbound triggers (API.md "Templates, schedules and triggers"), and the checks that need the
 * trigger's template: a rule only on a github trigger, parameters and mapping naming the template's parameters.
 */
import { z } from "zod";
import { TRIGGER_KINDS, type TriggerKind } from "../domain/automation-kinds";
import { GITHUB_EVENTS } from "../domain/github-events";
import type { TemplateParameter } from "../domain/template-params";
import { label, uuid } from "../http/fields";
import type { FieldError } from "./field-errors";
import { parametersBody } from "./templates";

const dottedPath = z
  .string()
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "must be a dotted path into the event's payload, such as issue.title")
  .max(200, "must be at most 200 characters");

export const githubRuleBody = z
  .strictObject({
    events: z
      .array(z.enum(GITHUB_EVENTS, { error: `must be one of ${GITHUB_EVENTS.join(", ")}` }))
      .min(1, "must name at least one event")
      .refine((e) => new Set(e).size === e.length, "must not repeat an event"),
    label: label(100).nullish().meta({ description: "issues.labeled fires only for this label (any label when absent)" }),
    command: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(100, "must be at most 100 characters")
      .regex(/^\S+$/, "must be one word, such as /agent")
      .nullish()
      .meta({ description: "issue_comment.created fires only for a comment whose body starts with it (any comment when absent)" }),
    mapping: z
      .record(z.string().max(100), dottedPath)
      .optional()
      .meta({ description: 'Per template parameter, a dotted path into the payload: `{"title": "issue.title"}`' }),
  })
  .meta({ id: "GithubTriggerRuleBody" });
export type GithubRuleBody = z.infer<typeof githubRuleBody>;

export const createTriggerBody = z
  .strictObject({
    template_id: uuid,
    name: label(200).nullish(),
    kind: z.enum(TRIGGER_KINDS, { error: `must be one of ${TRIGGER_KINDS.join(", ")}` }),
    parameters: parametersBody,
    github: githubRuleBody.nullish(),
  })
  .meta({ id: "CreateTrigger" });

export const updateTriggerBody = z
  .strictObject({
    name: label(200).nullable().optional(),
    parameters: parametersBody.optional(),
    github: githubRuleBody.optional(),
    paused: z.boolean("must be a boolean").optional(),
  })
  .meta({ id: "UpdateTrigger" });

/** The call an http trigger takes: the parameters of this firing (over the trigger's own). */
export const httpFiringBody = z.strictObject({ parameters: parametersBody }).meta({ id: "TriggerFiring" });

/** What a trigger's settings break against its kind and its template; empty when they hold. */
export function triggerProblems(
  kind: TriggerKind,
  templateParameters: readonly TemplateParameter[],
  settings: { parameters?: Record<string, unknown>; github?: GithubRuleBody | null },
): FieldError[] {
  const errors: FieldError[] = [];
  const declared = new Set(templateParameters.map((p) => p.name));
  for (const name of Object.keys(settings.parameters ?? {}))
    if (!declared.has(name)) errors.push({ path: `parameters.${name}`, message: `the template has no parameter ${name}` });
  if (kind === "http" && settings.github) errors.push({ path: "github", message: "only a github trigger takes a github rule" });
  if (kind === "github" && settings.github === null) errors.push({ path: "github", message: "a github trigger names the events it fires on" });
  for (const name of Object.keys(settings.github?.mapping ?? {}))
    if (!declared.has(name)) errors.push({ path: `github.mapping.${name}`, message: `the template has no parameter ${name}` });
  return errors;
}
