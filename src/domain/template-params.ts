/**
 * Templates of task graphs with typed parameters (API.md "Templates, schedules and triggers"): what a template is
 * checked for when saved, how a firing's parameters are resolved against it, and how `{{name}}` is filled in. Pure:
 * the routes and the room's schedules both instantiate through here.
 */
import type { DependencyType } from "../protocol/orchestratia-v1";
import type { FieldError } from "../protocol/field-errors";

export const PARAMETER_TYPES = ["string", "number", "boolean"] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];
export type ParameterValue = string | number | boolean;

export interface TemplateParameter {
  name: string;
  type: ParameterType;
  required?: boolean;
  default?: ParameterValue;
  description?: string;
}

export interface TemplateDependency {
  /** The key of another task of the template. */
  on: string;
  dependency_type: DependencyType;
  contract_key?: string | null;
}

/** One task of a template, as the create body names its fields; string fields may hold `{{name}}`. */
export interface TemplateTask {
  key: string;
  title: string;
  spec?: string;
  type?: string;
  priority?: string;
  target_repo?: string | null;
  target_branch?: string | null;
  acceptance_criteria?: string[];
  requirements?: Record<string, unknown> | null;
  require_plan?: boolean;
  timeout_seconds?: number | null;
  dependencies?: TemplateDependency[];
}

/** `{{ name }}`: a parameter's name is a letter or underscore, then letters, digits, underscores, dots or dashes. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}$/;

/** Every parameter name `value` (any JSON) mentions, with where. */
export function placeholdersIn(value: unknown, path: string, into: { name: string; path: string }[] = []) {
  if (typeof value === "string") for (const m of value.matchAll(PLACEHOLDER)) into.push({ name: m[1]!, path });
  else if (Array.isArray(value)) value.forEach((v, i) => placeholdersIn(v, `${path}.${i}`, into));
  else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) placeholdersIn(v, `${path}.${k}`, into);
  return into;
}

const typeOf = (v: unknown): ParameterType | null =>
  typeof v === "string" ? "string" : typeof v === "number" && Number.isFinite(v) ? "number" : typeof v === "boolean" ? "boolean" : null;

/**
 * What is wrong with a template as a whole (its fields each passed their own checks): parameters named twice or with
 * a default of another type, tasks keyed twice, dependencies on keys it lacks or in a cycle, and placeholders that
 * name no parameter.
 */
export function templateProblems(parameters: readonly TemplateParameter[], tasks: readonly TemplateTask[]): FieldError[] {
  const problems: FieldError[] = [];
  const names = new Set<string>();
  parameters.forEach((p, i) => {
    if (names.has(p.name)) problems.push({ path: `parameters.${i}.name`, message: `names "${p.name}" a second time` });
    names.add(p.name);
    if (p.default !== undefined && typeOf(p.default) !== p.type) problems.push({ path: `parameters.${i}.default`, message: `must be a ${p.type}` });
  });
  const keys = new Map<string, number>();
  tasks.forEach((t, i) => {
    if (keys.has(t.key)) problems.push({ path: `tasks.${i}.key`, message: `names "${t.key}" a second time` });
    else keys.set(t.key, i);
  });
  tasks.forEach((t, i) => {
    const seen = new Set<string>();
    (t.dependencies ?? []).forEach((d, j) => {
      const path = `tasks.${i}.dependencies.${j}.on`;
      if (!keys.has(d.on)) problems.push({ path, message: `names no task of the template ("${d.on}")` });
      else if (d.on === t.key) problems.push({ path, message: "a task cannot depend on itself" });
      else if (seen.has(d.on)) problems.push({ path, message: `depends on "${d.on}" a second time` });
      seen.add(d.on);
    });
    const { dependencies: _, key: __, ...fields } = t;
    for (const { name, path } of placeholdersIn(fields, `tasks.${i}`))
      if (!names.has(name)) problems.push({ path, message: `{{${name}}} names no parameter of the template` });
  });
  const cycle = dependencyCycle(tasks);
  if (cycle) problems.push({ path: "tasks", message: `dependencies form a cycle: ${cycle.join(" → ")}` });
  return problems;
}

/** A cycle among the tasks' dependencies by key (first found), or null. */
export function dependencyCycle(tasks: readonly TemplateTask[]): string[] | null {
  const upstreams = new Map(tasks.map((t) => [t.key, (t.dependencies ?? []).map((d) => d.on)]));
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (key: string): string[] | null => {
    if (state.get(key) === "done") return null;
    if (state.get(key) === "open") return [...path.slice(path.indexOf(key)), key];
    state.set(key, "open");
    path.push(key);
    for (const up of upstreams.get(key) ?? []) {
      const found = upstreams.has(up) ? visit(up) : null;
      if (found) return found;
    }
    path.pop();
    state.set(key, "done");
    return null;
  };
  for (const t of tasks) {
    const found = visit(t.key);
    if (found) return found;
  }
  return null;
}

/**
 * A firing's parameter values: those given, checked against their declared types, then each default; a required one
 * missing, one of another type, or one the template does not declare is an error naming `parameters.<name>`. With
 * `fromText` (a chat command's `name=value`), text is read as the declared number or boolean.
 */
export function resolveParameters(
  declared: readonly TemplateParameter[],
  given: Record<string, unknown>,
  options: { fromText?: boolean } = {},
): { values: Record<string, ParameterValue> } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const values: Record<string, ParameterValue> = {};
  const byName = new Map(declared.map((p) => [p.name, p]));
  for (const name of Object.keys(given)) if (!byName.has(name)) errors.push({ path: `parameters.${name}`, message: "is not a parameter of the template" });
  for (const p of declared) {
    const raw = given[p.name];
    const value = raw === undefined || raw === null ? p.default : options.fromText && typeof raw === "string" ? fromText(raw, p.type) : raw;
    if (value === undefined) {
      if (p.required) errors.push({ path: `parameters.${p.name}`, message: "is required" });
      continue;
    }
    if (typeOf(value) !== p.type) {
      errors.push({ path: `parameters.${p.name}`, message: `must be a ${p.type}` });
      continue;
    }
    values[p.name] = value as ParameterValue;
  }
  return errors.length ? { errors } : { values };
}

function fromText(text: string, type: ParameterType): unknown {
  if (type === "number") return text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text;
  if (type === "boolean") return text === "true" ? true : text === "false" ? false : text;
  return text;
}

/**
 * `value` with every `{{name}}` filled in: in text as the value's text (an optional parameter left unset reads as
 * nothing); a string that is one placeholder and nothing else, inside JSON fields, becomes the value itself, so a
 * number parameter stays a number in requirements.
 */
export function fill(value: unknown, values: Record<string, ParameterValue>, typed = false): unknown {
  if (typeof value === "string") {
    const whole = typed ? WHOLE_PLACEHOLDER.exec(value) : null;
    if (whole && values[whole[1]!] !== undefined) return values[whole[1]!];
    return value.replace(PLACEHOLDER, (_, name: string) => (values[name] === undefined ? "" : String(values[name])));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, values, typed));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values, typed)]));
  return value;
}

/** The template's tasks with their parameters filled in (requirements typed, every other field as text). */
export function renderTasks(tasks: readonly TemplateTask[], values: Record<string, ParameterValue>): TemplateTask[] {
  return tasks.map((t) => {
    const { requirements, dependencies, key, ...text } = t;
    return {
      ...(fill(text, values) as Omit<TemplateTask, "key">),
      key,
      ...(requirements !== undefined ? { requirements: fill(requirements, values, true) as Record<string, unknown> | null } : {}),
      ...(dependencies ? { dependencies } : {}),
    };
  });
}
