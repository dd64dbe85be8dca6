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
  type: "contract_fulfilled" | "contract_partial" | "contract_skipped" | "contract_missing";
  data: Record<string, unknown>;
}

/** A delivered contract's status (seed §2): fulfilled, partial or skipped; an entry without one is fulfilled data. */
const statusOf = (entry: unknown): string =>
  entry && typeof entry === "object" && typeof (entry as { status?: unknown }).status === "string" ? (entry as { status: string }).status : "fulfilled";

/** The event that says how a contract was delivered: only a fulfilled one is `contract_fulfilled`. */
const deliveryEvent = (status: string) => (status === "partial" ? "contract_partial" : status === "skipped" ? "contract_skipped" : "contract_fulfilled");

/**
 * Compares result.contracts with the spec's output_expectations. Advisory:
 * findings are logged, never block. Legacy results get no contract processing.
 */
export function checkContracts(result: Record<string, unknown>, structured: boolean, structuredSpec: Record<string, unknown> | null): ContractFinding[] {
  if (!structured) return [];
  const delivered = (result.contracts ?? {}) as Record<string, unknown>;
  const expectations = (structuredSpec?.output_expectations as { contracts?: Record<string, { required?: boolean }> } | undefined)?.contracts ?? {};
  const findings: ContractFinding[] = Object.entries(delivered).map(([key, entry]) => ({
    type: deliveryEvent(statusOf(entry)),
    data: { contract_key: key, status: statusOf(entry), declared: key in expectations },
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
  /** The session that task is given to (its daemon hears of the upstream's completion); undefined where not read. */
  sessionId?: string | null;
}

export interface Resolution {
  /** Unfinished downstream tasks whose last blocking dependency this was. */
  unblocked: string[];
  /** Input dependencies that resolve without their contract (the seed's deadlock-free edge case). */
  missingInputs: { taskId: string; contractKey: string }[];
  /** Input dependencies that resolve on a contract delivered partial or skipped: each downstream task is told which. */
  incompleteInputs: { taskId: string; contractKey: string; type: "contract_partial" | "contract_skipped"; status: string; reason?: string }[];
}

/** A skipped contract's reason (seed §2: in its data; the hub also takes it beside `status`). */
function reasonOf(entry: Record<string, unknown>): string | undefined {
  const data = entry.data as { reason?: unknown } | string | undefined;
  const reason = entry.reason ?? (typeof data === "string" ? data : data && typeof data === "object" ? data.reason : undefined);
  return typeof reason === "string" ? reason : undefined;
}

export function resolveDownstream(result: Record<string, unknown>, structured: boolean, links: readonly DownstreamLink[]): Resolution {
  const contracts = structured ? ((result.contracts ?? {}) as Record<string, unknown>) : {};
  const blocking = links.filter((l) => l.dependencyType !== "related");
  const inputs = blocking.filter((l) => l.dependencyType === "input");
  return {
    unblocked: blocking.filter((l) => l.otherUnresolved === 0 && !FINISHED.includes(l.taskStatus)).map((l) => l.taskId),
    missingInputs: inputs.filter((l) => !(l.contractKey! in contracts)).map((l) => ({ taskId: l.taskId, contractKey: l.contractKey! })),
    incompleteInputs: inputs.flatMap((l) => {
      const entry = contracts[l.contractKey!];
      const type = l.contractKey! in contracts ? deliveryEvent(statusOf(entry)) : "contract_fulfilled";
      if (type === "contract_fulfilled") return [];
      const reason = reasonOf(entry as Record<string, unknown>);
      return [{ taskId: l.taskId, contractKey: l.contractKey!, type, status: statusOf(entry), ...(reason !== undefined ? { reason } : {}) }];
    }),
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
