/**
 * What a completion sets off (seed §2 "What Happens After Completion"), as
 * pure planning: the contract check, which downstream tasks it unblocks, and
 * which of them (or of other waiting tasks) go to which server.
 */
import type { Requirements } from "../protocol/orchestratia-v1";
import type { TaskStatus } from "./lifecycle";
import { FINISHED } from "./lifecycle";
import { bestMatch, hasCapacity, type Candidate, type Match } from "./matching";

export interface ContractFinding {
  type: "contract_fulfilled" | "contract_missing";
  data: Record<string, unknown>;
}

/**
 * Compares result.contracts with the spec's output_expectations. Advisory:
 * findings are logged, never block. Legacy results get no contract processing.
 */
export function checkContracts(result: Record<string, unknown>, structured: boolean, structuredSpec: Record<string, unknown> | null): ContractFinding[] {
  if (!structured) return [];
  const delivered = (result.contracts ?? {}) as Record<string, { status?: string }>;
  const expectations = (structuredSpec?.output_expectations as { contracts?: Record<string, { required?: boolean }> } | undefined)?.contracts ?? {};
  const findings: ContractFinding[] = Object.entries(delivered).map(([key, entry]) => ({
    type: "contract_fulfilled",
    data: { contract_key: key, status: entry?.status ?? "fulfilled", declared: key in expectations },
  }));
  for (const [key, expectation] of Object.entries(expectations)) {
    if (expectation?.required && !(key in delivered)) findings.push({ type: "contract_missing", data: { contract_key: key, required: true } });
  }
  return findings;
}

/** A dependency of some downstream task on the task that just finished. */
export interface DownstreamLink {
  taskId: string;
  taskStatus: TaskStatus;
  dependencyType: "blocks" | "input" | "related";
  contractKey: string | null;
  /** Unresolved blocks/input dependencies of that task on other upstreams. */
  otherUnresolved: number;
}

export interface Resolution {
  /** Unfinished downstream tasks whose last blocking dependency this was. */
  unblocked: string[];
  /** Input dependencies that resolve without their contract (the seed's deadlock-free edge case). */
  missingInputs: { taskId: string; contractKey: string }[];
}

export function resolveDownstream(result: Record<string, unknown>, structured: boolean, links: readonly DownstreamLink[]): Resolution {
  const contracts = structured ? ((result.contracts ?? {}) as Record<string, unknown>) : {};
  const blocking = links.filter((l) => l.dependencyType !== "related");
  return {
    unblocked: blocking.filter((l) => l.otherUnresolved === 0 && !FINISHED.includes(l.taskStatus)).map((l) => l.taskId),
    missingInputs: blocking
      .filter((l) => l.dependencyType === "input" && !(l.contractKey! in contracts))
      .map((l) => ({ taskId: l.taskId, contractKey: l.contractKey! })),
  };
}

export interface Assignable {
  id: string;
  requirements: Requirements;
  requirePlan: boolean;
  /** Servers never to be offered this task: those that rejected it (compute protocol). */
  rejectedBy?: readonly string[];
}

export interface Assignment {
  taskId: string;
  match: Match;
  requirePlan: boolean;
}

/** Gives each task the best server in turn, counting the tasks given out so far against each server's capacity. */
export function planAssignments(tasks: readonly Assignable[], candidates: readonly Candidate[]): Assignment[] {
  const pool = candidates.map((c) => ({ ...c }));
  const plan: Assignment[] = [];
  for (const task of tasks) {
    // Once every server is full, no later task can be placed either.
    if (!pool.some(hasCapacity)) break;
    const match = bestMatch(task.requirements, pool, task.rejectedBy);
    if (!match) continue;
    plan.push({ taskId: task.id, match, requirePlan: task.requirePlan });
    pool.find((c) => c.id === match.server_id)!.activeTasks++;
  }
  return plan;
}
