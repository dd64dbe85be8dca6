/**
 * Dependency resolution (seed §3, §4): when is a dependency resolved, and
 * what does the downstream task receive.
 *
 *   blocks  — resolved when the upstream is done
 *   input   — resolved when the upstream is done, carrying result.contracts[key].data;
 *             still resolved (with a warning) when the key is missing, so pipelines never deadlock;
 *             a partial or skipped contract is carried with its status (deliveredInput)
 *   related — resolved at once
 */
import type { DependencyType } from "../protocol/orchestratia-v1";
import type { TaskStatus } from "./lifecycle";

export const BLOCKING: readonly DependencyType[] = ["blocks", "input"];

export interface Upstream {
  status: TaskStatus;
  result: Record<string, unknown> | null;
  resultStructured: boolean;
}

export type Resolution = { resolved: false } | { resolved: true; data: unknown; contractMissing: boolean };

function contractData(upstream: Upstream, key: string): { found: boolean; data: unknown } {
  const contracts = upstream.resultStructured ? upstream.result?.contracts : undefined;
  if (!contracts || typeof contracts !== "object" || !(key in contracts)) return { found: false, data: null };
  const entry = (contracts as Record<string, { data?: unknown }>)[key];
  return { found: true, data: entry?.data ?? null };
}

export function resolveDependency(type: DependencyType, contractKey: string | null, upstream: Upstream): Resolution {
  if (type === "related") return { resolved: true, data: null, contractMissing: false };
  if (upstream.status !== "done") return { resolved: false };
  if (type === "blocks") return { resolved: true, data: null, contractMissing: false };
  const { found, data } = contractData(upstream, contractKey ?? "");
  return { resolved: true, data, contractMissing: !found };
}

/**
 * What a downstream task receives for an input (its resolved_inputs entry) from the upstream's contract entry: a
 * fulfilled contract's data as it is; a partial or skipped one as the entry itself (`{status, data, reason?}`), so
 * that it is never taken for complete data; null when the contract was not delivered.
 */
export function deliveredInput(entry: unknown): unknown {
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) return null;
  const { status, data } = entry as { status?: unknown; data?: unknown };
  return status === undefined || status === "fulfilled" ? (data ?? null) : entry;
}

/** A task is blocked while any blocks/input dependency is unresolved. */
export const isBlocked = (deps: readonly { dependencyType: DependencyType; resolved: boolean }[]) =>
  deps.some((d) => BLOCKING.includes(d.dependencyType) && !d.resolved);
