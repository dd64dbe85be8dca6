/**
 * What the task form holds, and the request bodies made of it: a new task's (POST /api/v1/tasks) and the changes
 * to an existing one (PUT /api/v1/tasks/{id}, only what differs, and only what may still change).
 */
import type { Task } from "../types";

/** The seed's dependency types (orchestratia-protocols-v1 §3). */
export const DEPENDENCY_TYPES = ["blocks", "input", "related"] as const;
export type DependencyType = (typeof DEPENDENCY_TYPES)[number];

export interface DraftDependency {
  taskId: string;
  type: DependencyType;
  contractKey: string;
}

/** The seed's requirements/v1 fields a person sets; lists are typed as comma-separated words. */
export const REQUIREMENT_LISTS = ["languages", "environments", "tools", "tags"] as const;
export type RequirementList = (typeof REQUIREMENT_LISTS)[number];

export interface TaskDraft {
  title: string;
  type: string;
  priority: Task["priority"];
  spec: string;
  /** JSON text; empty for none. */
  structuredSpec: string;
  acceptanceCriteria: string[];
  repo: string;
  preferServer: string;
  lists: Record<RequirementList, string>;
  requirePlan: boolean;
  targetRepo: string;
  targetBranch: string;
  timeoutMinutes: string;
  dependencies: DraftDependency[];
}

export const TYPE_SUGGESTIONS = ["feature", "bugfix", "refactor", "chore", "docs"];

export const emptyDraft = (): TaskDraft => ({
  title: "",
  type: "feature",
  priority: "normal",
  spec: "",
  structuredSpec: "",
  acceptanceCriteria: [],
  repo: "",
  preferServer: "",
  lists: { languages: "", environments: "", tools: "", tags: "" },
  requirePlan: false,
  targetRepo: "",
  targetBranch: "",
  timeoutMinutes: "",
  dependencies: [],
});

const words = (text: string) =>
  text
    .split(",")
    .map((w) => w.trim())
    .filter(Boolean);
const asText = (v: unknown) => (typeof v === "string" ? v : "");
const asList = (v: unknown) => (Array.isArray(v) ? v.join(", ") : "");

export function draftOf(task: Task): TaskDraft {
  const r = task.requirements ?? {};
  return {
    title: task.title,
    type: task.type,
    priority: task.priority,
    spec: task.spec,
    structuredSpec: task.structured_spec ? JSON.stringify(task.structured_spec, null, 2) : "",
    acceptanceCriteria: [...task.acceptance_criteria],
    repo: asText(r.repo),
    preferServer: asText(r.prefer_server),
    lists: { languages: asList(r.languages), environments: asList(r.environments), tools: asList(r.tools), tags: asList(r.tags) },
    requirePlan: task.require_plan,
    targetRepo: task.target_repo ?? "",
    targetBranch: task.target_branch ?? "",
    timeoutMinutes: task.timeout_seconds ? String(Math.round(task.timeout_seconds / 60)) : "",
    dependencies: task.dependencies.map((d) => ({ taskId: d.depends_on_task_id, type: d.dependency_type, contractKey: d.contract_key ?? "" })),
  };
}

/** The structured spec as JSON, or why it is not (said beside the field before anything is sent). */
export function parseStructuredSpec(text: string): { value: Record<string, unknown> | null } | { error: string } {
  if (!text.trim()) return { value: null };
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "must be a JSON object" };
    return { value: value as Record<string, unknown> };
  } catch (e) {
    return { error: `is not JSON: ${(e as Error).message}` };
  }
}

/**
 * The requirements/v1 object the draft says, keeping what the form does not show (`role`, `capabilities`, a custom
 * requirement) from `kept`; null when nothing is required.
 */
function requirementsOf(d: TaskDraft, kept: Record<string, unknown> | null): Record<string, unknown> | null {
  const known = ["repo", "prefer_server", ...Object.keys(d.lists), "$schema"];
  const set: Record<string, unknown> = Object.fromEntries(Object.entries(kept ?? {}).filter(([k]) => !known.includes(k)));
  if (d.repo.trim()) set.repo = d.repo.trim();
  if (d.preferServer.trim()) set.prefer_server = d.preferServer.trim();
  for (const list of REQUIREMENT_LISTS) if (words(d.lists[list]).length) set[list] = words(d.lists[list]);
  return Object.keys(set).length ? { $schema: "orchestratia/requirements/v1", ...set } : null;
}

const criteriaOf = (d: TaskDraft) => d.acceptanceCriteria.map((c) => c.trim()).filter(Boolean);
/** Minutes as typed, in seconds (a value that is not a whole number is sent as typed, for the hub to refuse by name). */
const timeoutOf = (d: TaskDraft) => (d.timeoutMinutes.trim() ? Number(d.timeoutMinutes) * 60 : null);

const dependencyOf = (dep: DraftDependency) => ({
  depends_on_task_id: dep.taskId,
  dependency_type: dep.type,
  ...(dep.contractKey.trim() ? { contract_key: dep.contractKey.trim() } : {}),
});

/** The body creating the drafted task; the structured spec must have parsed. */
export function createBody(projectId: string, d: TaskDraft, structuredSpec: Record<string, unknown> | null) {
  const requirements = requirementsOf(d, null);
  const timeout = timeoutOf(d);
  return {
    project_id: projectId,
    title: d.title,
    type: d.type,
    priority: d.priority,
    spec: d.spec,
    acceptance_criteria: criteriaOf(d),
    require_plan: d.requirePlan,
    ...(structuredSpec ? { structured_spec: structuredSpec } : {}),
    ...(requirements ? { requirements } : {}),
    ...(d.targetRepo.trim() ? { target_repo: d.targetRepo.trim() } : {}),
    ...(d.targetBranch.trim() ? { target_branch: d.targetBranch.trim() } : {}),
    ...(timeout !== null ? { timeout_seconds: timeout } : {}),
    ...(d.dependencies.length ? { dependencies: d.dependencies.map(dependencyOf) } : {}),
  };
}

/** Fields the hub keeps fixed once a task has left `pending`. */
export const FIXED_AFTER_PENDING = ["type", "spec", "structured_spec", "requirements"] as const;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What the draft changes of the task: only fields that differ, and of the fixed ones only while it is pending. */
export function changesOf(task: Task, d: TaskDraft, structuredSpec: Record<string, unknown> | null) {
  const pending = task.status === "pending";
  const wanted = {
    title: d.title,
    priority: d.priority,
    acceptance_criteria: criteriaOf(d),
    require_plan: d.requirePlan,
    target_repo: d.targetRepo.trim() || null,
    target_branch: d.targetBranch.trim() || null,
    timeout_seconds: timeoutOf(d),
    ...(pending ? { type: d.type, spec: d.spec, structured_spec: structuredSpec, requirements: requirementsOf(d, task.requirements) } : {}),
  };
  return Object.fromEntries(Object.entries(wanted).filter(([k, v]) => !same(v, task[k as keyof Task]))) as Partial<typeof wanted>;
}

/** How the task's dependencies change: those to remove, and those to add (a changed type or key is both). */
export function dependencyChanges(task: Task, d: TaskDraft) {
  const key = (dep: DraftDependency) => `${dep.taskId} ${dep.type} ${dep.contractKey.trim()}`;
  const now = draftOf(task).dependencies;
  const wanted = new Set(d.dependencies.map(key));
  const had = new Set(now.map(key));
  return {
    remove: now.filter((dep) => !wanted.has(key(dep))).map((dep) => dep.taskId),
    add: d.dependencies.filter((dep) => !had.has(key(dep))).map(dependencyOf),
  };
}
