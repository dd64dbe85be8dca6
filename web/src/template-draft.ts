/**
 * What the template editor holds (every field as the person typed it) and the request body made of it
 * (POST|PUT .../templates), both ways: a saved template or a drafted graph opens as a draft, and a draft saves as a body.
 * Values the form does not show (a task's target repo, branch, timeout) ride along unchanged.
 */
import type { Schemas } from "../../client";

export type Template = Schemas["Template"];
export type TemplateBody = { name: string; description?: string | null; parameters: Schemas["TemplateParameter"][]; tasks: Schemas["TemplateTask"][] };
type TaskBody = Schemas["TemplateTask"];

export const PARAMETER_TYPES = ["string", "number", "boolean"] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];
export const DEPENDENCY_TYPES = ["blocks", "input", "related"] as const;
export type DependencyType = (typeof DEPENDENCY_TYPES)[number];

export interface ParameterDraft {
  name: string;
  type: ParameterType;
  required: boolean;
  /** As typed; "" for none (a boolean's is "", "true" or "false"). */
  default: string;
  description: string;
}

export interface DependencyDraft {
  on: string;
  type: DependencyType;
  contractKey: string;
}

export interface TemplateTaskDraft {
  key: string;
  title: string;
  spec: string;
  type: string;
  priority: NonNullable<TaskBody["priority"]>;
  /** JSON text of the requirements object; "" for none. */
  requirements: string;
  /** One criterion a line. */
  acceptance: string;
  requirePlan: boolean;
  dependencies: DependencyDraft[];
  /** Fields kept as they came (target_repo, target_branch, timeout_seconds). */
  kept: Partial<TaskBody>;
}

export interface TemplateDraft {
  name: string;
  description: string;
  parameters: ParameterDraft[];
  tasks: TemplateTaskDraft[];
}

export const emptyParameter = (): ParameterDraft => ({ name: "", type: "string", required: false, default: "", description: "" });

export const emptyTask = (key: string): TemplateTaskDraft => ({
  key,
  title: "",
  spec: "",
  type: "feature",
  priority: "normal",
  requirements: "",
  acceptance: "",
  requirePlan: false,
  dependencies: [],
  kept: {},
});

export const emptyTemplate = (): TemplateDraft => ({ name: "", description: "", parameters: [], tasks: [emptyTask("task-1")] });

/** A key not yet used by the draft's tasks. */
export function freshKey(tasks: readonly TemplateTaskDraft[]): string {
  const used = new Set(tasks.map((t) => t.key));
  let n = tasks.length + 1;
  while (used.has(`task-${n}`)) n++;
  return `task-${n}`;
}

const taskDraftOf = (t: TaskBody): TemplateTaskDraft => ({
  key: t.key,
  title: t.title,
  spec: t.spec ?? "",
  type: t.type ?? "feature",
  priority: t.priority === "urgent" ? "critical" : (t.priority ?? "normal"),
  requirements: t.requirements ? JSON.stringify(t.requirements, null, 2) : "",
  acceptance: (t.acceptance_criteria ?? []).join("\n"),
  requirePlan: t.require_plan ?? false,
  dependencies: (t.dependencies ?? []).map((d) => ({ on: d.on, type: d.dependency_type ?? "blocks", contractKey: d.contract_key ?? "" })),
  kept: {
    ...(t.target_repo != null ? { target_repo: t.target_repo } : {}),
    ...(t.target_branch != null ? { target_branch: t.target_branch } : {}),
    ...(t.timeout_seconds != null ? { timeout_seconds: t.timeout_seconds } : {}),
  },
});

export function draftOf(t: Pick<TemplateBody, "name" | "description" | "parameters" | "tasks">): TemplateDraft {
  return {
    name: t.name,
    description: t.description ?? "",
    parameters: t.parameters.map((p) => ({
      name: p.name,
      type: p.type,
      required: p.required ?? false,
      default: p.default === undefined ? "" : String(p.default),
      description: p.description ?? "",
    })),
    tasks: t.tasks.map(taskDraftOf),
  };
}

/** A field the form found wrong before sending (requirements that are not JSON), by the path the hub would name. */
export interface LocalError {
  path: string;
  message: string;
}

/** A typed default as the hub takes it: a number parses, a boolean is true or false; what does not parse is sent as typed, for the hub to name. */
function defaultOf(p: ParameterDraft): string | number | boolean | undefined {
  const v = p.default.trim();
  if (v === "") return undefined;
  if (p.type === "number") return Number.isFinite(Number(v)) ? Number(v) : v;
  if (p.type === "boolean") return v === "true" ? true : v === "false" ? false : v;
  return p.default;
}

/** The body a draft saves as, or the fields wrong before sending. */
export function bodyOf(d: TemplateDraft): { body: TemplateBody } | { errors: LocalError[] } {
  const errors: LocalError[] = [];
  const tasks = d.tasks.map((t, i): TaskBody => {
    let requirements: TaskBody["requirements"];
    if (t.requirements.trim()) {
      try {
        requirements = JSON.parse(t.requirements) as TaskBody["requirements"];
        if (requirements === null || typeof requirements !== "object" || Array.isArray(requirements)) throw new Error();
      } catch {
        errors.push({ path: `tasks.${i}.requirements`, message: 'must be a JSON object, such as {"languages": ["python"]}' });
      }
    }
    const acceptance = t.acceptance
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    return {
      ...t.kept,
      key: t.key.trim(),
      title: t.title,
      ...(t.spec.trim() ? { spec: t.spec } : {}),
      ...(t.type.trim() ? { type: t.type.trim() } : {}),
      priority: t.priority,
      ...(requirements ? { requirements } : {}),
      ...(acceptance.length ? { acceptance_criteria: acceptance } : {}),
      ...(t.requirePlan ? { require_plan: true } : {}),
      ...(t.dependencies.length
        ? {
            dependencies: t.dependencies.map((dep) => ({
              on: dep.on,
              dependency_type: dep.type,
              ...(dep.type === "input" || dep.contractKey.trim() ? { contract_key: dep.contractKey.trim() } : {}),
            })),
          }
        : {}),
    };
  });
  if (errors.length) return { errors };
  return {
    body: {
      name: d.name.trim(),
      description: d.description.trim() || null,
      parameters: d.parameters.map((p) => {
        const value = defaultOf(p);
        return {
          name: p.name.trim(),
          type: p.type,
          ...(p.required ? { required: true } : {}),
          ...(value !== undefined ? { default: value as string } : {}),
          ...(p.description.trim() ? { description: p.description.trim() } : {}),
        };
      }),
      tasks,
    },
  };
}

/** Every path a field of the form stands for, so a refusal lands beside the field it names (the rest above the form). */
export function fieldPaths(d: TemplateDraft): string[] {
  const paths = ["name", "description", "parameters", "tasks"];
  d.parameters.forEach((_, i) => paths.push(...["", ".name", ".type", ".required", ".default", ".description"].map((f) => `parameters.${i}${f}`)));
  d.tasks.forEach((t, i) => {
    const at = `tasks.${i}`;
    paths.push(
      at,
      ...["key", "title", "spec", "type", "priority", "requirements", "acceptance_criteria", "require_plan", "dependencies"].map((f) => `${at}.${f}`),
    );
    t.dependencies.forEach((_, j) => paths.push(...["", ".on", ".dependency_type", ".contract_key"].map((f) => `${at}.dependencies.${j}${f}`)));
  });
  return paths;
}

/** Parameters a run is given, from the run form's fields as typed: empty ones are left out (a default or the hub's "is required" applies). */
export function parameterValues(params: readonly Schemas["TemplateParameter"][], typed: Record<string, string | boolean>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const p of params) {
    const v = typed[p.name];
    if (v === undefined) continue;
    if (p.type === "boolean") values[p.name] = v === true || v === "true";
    else if (typeof v === "string" && v.trim() !== "") values[p.name] = p.type === "number" && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return values;
}

/** The run form's starting values: each parameter's default, as typed. */
export const typedDefaults = (params: readonly Schemas["TemplateParameter"][], given: Record<string, unknown> = {}): Record<string, string | boolean> =>
  Object.fromEntries(
    params.map((p) => {
      const v = given[p.name] ?? p.default;
      return [p.name, p.type === "boolean" ? v === true : v === undefined || v === null ? "" : String(v)];
    }),
  );
