/**
 * "Save as template" from a graph the project already ran: its tasks, keyed by their titles, with their dependencies
 * by key. Pure: the route reads the graph and hands it here; the person edits the draft (adds parameters) and saves it.
 */
import type { DependencyType } from "../protocol/orchestratia-v1";
import { slugify } from "./slug";
import type { TemplateTask } from "./template-params";

export interface DraftSource {
  id: string;
  title: string;
  spec: string;
  type: string;
  priority: string;
  targetRepo: string | null;
  targetBranch: string | null;
  acceptanceCriteria: string[];
  requirements: Record<string, unknown> | null;
  requirePlan: boolean;
  timeoutSeconds: number | null;
  createdAt: string;
  /** Insertion order (rowid): tasks made in one batch share `createdAt`. */
  order: number;
}

export interface DraftDependency {
  taskId: string;
  dependsOnTaskId: string;
  dependencyType: DependencyType;
  contractKey: string | null;
}

/** The graph's tasks, upstream first (then oldest first), each keyed once; dependencies leaving the graph are dropped. */
export function draftTemplate(tasks: readonly DraftSource[], deps: readonly DraftDependency[]): TemplateTask[] {
  const inGraph = new Set(tasks.map((t) => t.id));
  const within = deps.filter((d) => inGraph.has(d.taskId) && inGraph.has(d.dependsOnTaskId));
  const keys = new Map<string, string>();
  const taken = new Set<string>();
  for (const t of [...tasks].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.order - b.order)) {
    const base = (slugify(t.title) || "task").slice(0, 60);
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base}-${n}`;
    taken.add(key);
    keys.set(t.id, key);
  }
  return upstreamFirst(tasks, within).map((t) => ({
    key: keys.get(t.id)!,
    title: t.title,
    ...(t.spec ? { spec: t.spec } : {}),
    type: t.type,
    priority: t.priority,
    ...(t.targetRepo ? { target_repo: t.targetRepo } : {}),
    ...(t.targetBranch ? { target_branch: t.targetBranch } : {}),
    ...(t.acceptanceCriteria.length ? { acceptance_criteria: t.acceptanceCriteria } : {}),
    ...(t.requirements ? { requirements: t.requirements } : {}),
    ...(t.requirePlan ? { require_plan: true } : {}),
    ...(t.timeoutSeconds ? { timeout_seconds: t.timeoutSeconds } : {}),
    ...dependenciesOf(t.id, within, keys),
  }));
}

function dependenciesOf(id: string, deps: readonly DraftDependency[], keys: Map<string, string>) {
  // In the order their upstreams were made, as the keys were given.
  const rank = [...keys.keys()];
  const own = deps.filter((d) => d.taskId === id).sort((a, b) => rank.indexOf(a.dependsOnTaskId) - rank.indexOf(b.dependsOnTaskId));
  if (own.length === 0) return {};
  return {
    dependencies: own.map((d) => ({
      on: keys.get(d.dependsOnTaskId)!,
      dependency_type: d.dependencyType,
      ...(d.contractKey ? { contract_key: d.contractKey } : {}),
    })),
  };
}

/** Tasks in an order where each comes after those it depends on (oldest first among the ready ones). */
function upstreamFirst(tasks: readonly DraftSource[], deps: readonly DraftDependency[]): DraftSource[] {
  const waiting = new Map(tasks.map((t) => [t.id, new Set(deps.filter((d) => d.taskId === t.id).map((d) => d.dependsOnTaskId))]));
  const byAge = [...tasks].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.order - b.order);
  const ordered: DraftSource[] = [];
  while (ordered.length < tasks.length) {
    const next = byAge.find((t) => waiting.has(t.id) && waiting.get(t.id)!.size === 0) ?? byAge.find((t) => waiting.has(t.id))!;
    ordered.push(next);
    waiting.delete(next.id);
    for (const ups of waiting.values()) ups.delete(next.id);
  }
  return ordered;
}
