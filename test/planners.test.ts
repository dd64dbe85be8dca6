/**
 * Planners tested directly, without a hub: their reads come from memory, and
 * what they plan (a refusal, or the effects their batch would have) is
 * checked without running it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import type { Assignable, DownstreamLink } from "../src/domain/cascade";
import type { Candidate } from "../src/domain/matching";
import { DEFAULT_PROJECT_SETTINGS } from "../src/domain/project-settings";
import type { RoomActor, RoomCommand } from "../src/room/commands";
import { isProblem, planOperation, type OpContext, type WritePlan } from "../src/room/operations";
import type { TaskRow } from "../src/room/statements";
import type { Blocker, TaskReads } from "../src/room/task-reads";
import { DEFAULT_REVIEW_POLICY } from "../src/domain/code-review";

const NOW = "2026-11-23T10:00:00.000Z";
const worker: RoomActor = { kind: "agent", serverId: "server-w", serverName: "w", label: "agent:w" };
const stranger: RoomActor = { kind: "agent", serverId: "server-x", serverName: "x", label: "agent:x" };

function task(id: string, fields: Partial<TaskRow> = {}): TaskRow {
  return {
    id,
    projectId: "project",
    title: id,
    spec: "",
    type: "feature",
    priority: "normal",
    status: "pending",
    targetRepo: null,
    targetBranch: null,
    acceptanceCriteria: [],
    structuredSpec: null,
    requirements: null,
    result: null,
    resultStructured: false,
    errorCode: null,
    progress: null,
    progressMessage: null,
    plan: null,
    planFeedback: null,
    requirePlan: false,
    blocked: false,
    awaitingApproval: false,
    assignedServerId: null,
    targetSessionId: null,
    sourceSessionId: null,
    createdBy: "test",
    timeoutSeconds: null,
    deadlineAt: null,
    warnings: [],
    clientId: null,
    clientRequestHash: null,
    payload: null,
    context: null,
    routing: null,
    observability: null,
    extensions: null,
    error: null,
    response: null,
    retryCount: 0,
    lateResult: null,
    gitDiffStats: null,
    rejectedBy: [],
    assignedAt: null,
    traceId: null,
    traceparent: null,
    runId: null,
    stalledAt: null,
    unassignableAt: null,
    reviewStatus: null,
    reviewAttempt: 0,
    reviewOf: null,
    logFrom: 0,
    version: 1,
    createdAt: NOW,
    updatedAt: NOW,
    startedAt: null,
    completedAt: null,
    ...fields,
  };
}

const server = (id: string, fields: Partial<Candidate> = {}): Candidate => ({
  id,
  name: id,
  capabilities: { languages: ["typescript"] } as Candidate["capabilities"],
  repos: {},
  os: "linux",
  online: true,
  activeTasks: 0,
  ...fields,
});

/** A project held in memory: the reads a planner makes, answered from these. */
function memoryReads(world: {
  tasks: TaskRow[];
  blockers?: Record<string, Blocker[]>;
  links?: Record<string, DownstreamLink[]>;
  /** Tasks with questions open. */
  asked?: string[];
  waiting?: Assignable[];
  servers?: Candidate[];
}): TaskReads {
  const byId = new Map(world.tasks.map((t) => [t.id, t]));
  return {
    async row(id) {
      return byId.get(id);
    },
    async taskWithBlockers(id) {
      const t = byId.get(id);
      return t && { task: t, blockers: world.blockers?.[id] ?? [] };
    },
    async taskWithDownstream(id) {
      const t = byId.get(id);
      return t && { task: t, links: world.links?.[id] ?? [], openQuestions: world.asked?.includes(id) ?? false };
    },
    async assignmentContext(limit, alsoUnblocking = []) {
      const waiting = (world.waiting ?? []).filter((w) => byId.get(w.id)?.status === "pending" || alsoUnblocking.includes(w.id));
      return { waiting: waiting.slice(0, limit), candidates: world.servers ?? [] };
    },
  };
}

const context = (reads: TaskReads, actor: RoomActor = worker, offerWaiting = true): OpContext => ({
  db: createDb(env.DB),
  d1: env.DB,
  projectId: "project",
  actor,
  now: NOW,
  reads,
  offerWaiting,
  settings: async () => DEFAULT_PROJECT_SETTINGS,
  budgets: async () => [],
  reviewPolicy: async () => DEFAULT_REVIEW_POLICY,
});

async function plan(reads: TaskReads, command: RoomCommand, actor?: RoomActor, offerWaiting?: boolean): Promise<WritePlan> {
  const outcome = await planOperation(context(reads, actor, offerWaiting), command);
  if (isProblem(outcome)) throw new Error(`refused: ${outcome.code} ${outcome.detail}`);
  return outcome;
}

const complete = (taskId: string, result: Record<string, unknown>): RoomCommand => ({ op: "complete", taskId, result, structured: true, warnings: [] });

describe("start", () => {
  const assigned = task("a", { status: "assigned", assignedServerId: "server-w", timeoutSeconds: 60 });

  it("refuses a blocked task, naming what blocks it", async () => {
    const blockers = [{ depends_on_task_id: "up", dependency_type: "blocks" }];
    const outcome = await planOperation(context(memoryReads({ tasks: [assigned], blockers: { a: blockers } })), { op: "start", taskId: "a" });
    expect(outcome).toMatchObject({ status: 409, code: "UNRESOLVED_DEPENDENCIES", extensions: { unresolved: blockers } });
  });

  it("puts an unblocked task to work and starts its clock", async () => {
    const written = await plan(memoryReads({ tasks: [assigned] }), { op: "start", taskId: "a" });
    expect(written.effects?.task?.after).toMatchObject({ status: "running", startedAt: NOW, version: 2 });
    expect(written.deadline).toBe("2026-11-23T10:01:00.000Z");
  });

  it("is only for the agent the task is assigned to", async () => {
    const outcome = await planOperation(context(memoryReads({ tasks: [assigned] }), stranger), { op: "start", taskId: "a" });
    expect(outcome).toMatchObject({ status: 403, code: "NOT_ALLOWED" });
    expect(await planOperation(context(memoryReads({ tasks: [] })), { op: "start", taskId: "a" })).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });
});

describe("complete", () => {
  const running = task("up", { status: "running", assignedServerId: "server-w" });
  const links: DownstreamLink[] = [
    { taskId: "last-blocker", taskStatus: "pending", dependencyType: "input", contractKey: "api", otherUnresolved: 0 },
    { taskId: "still-blocked", taskStatus: "pending", dependencyType: "blocks", contractKey: null, otherUnresolved: 1 },
    { taskId: "related", taskStatus: "pending", dependencyType: "related", contractKey: null, otherUnresolved: 0 },
  ];
  const downstream = ["last-blocker", "still-blocked", "related"].map((id) => task(id, { requirements: { languages: ["typescript"] } }));
  const waiting: Assignable[] = [{ id: "last-blocker", requirements: { languages: ["typescript"] }, requirePlan: false }];

  it("unblocks only the tasks whose last blocker it was, and offers them to a server with room", async () => {
    const reads = memoryReads({ tasks: [running, ...downstream], links: { up: links }, waiting, servers: [server("server-w", { activeTasks: 1 })] });
    const written = await plan(reads, complete("up", { summary: "done", contracts: { api: { data: { url: "/v1" } } } }));
    expect(written.effects?.unblocked).toEqual(["last-blocker"]);
    // The server that ran the task is counted free again, so it takes the unblocked task.
    expect(written.effects?.assignments?.map((a) => [a.taskId, a.match.server_id])).toEqual([["last-blocker", "server-w"]]);
    expect(written.effects?.task?.after).toMatchObject({ status: "done", completedAt: NOW, deadlineAt: null });
  });

  it("offers nothing when told not to (other rooms kept filling the servers)", async () => {
    const reads = memoryReads({ tasks: [running, ...downstream], links: { up: links }, waiting, servers: [server("server-w")] });
    const written = await plan(reads, complete("up", { summary: "done" }), worker, false);
    expect(written.effects?.unblocked).toEqual(["last-blocker"]);
    expect(written.effects?.assignments).toEqual([]);
  });

  it("is unchanged when repeated with the same result, and a conflict with another", async () => {
    const done = task("up", { status: "done", assignedServerId: "server-w", result: { summary: "same" } });
    const again = await plan(memoryReads({ tasks: [done] }), complete("up", { summary: "same" }));
    expect(again).toMatchObject({ unchanged: true, statements: [] });
    expect(await planOperation(context(memoryReads({ tasks: [done] })), complete("up", { summary: "other" }))).toMatchObject({
      status: 409,
      code: "RESULT_CONFLICT",
    });
  });
});

describe("fail and cancel", () => {
  it("free the server's capacity for waiting tasks, but only for a task that held it", async () => {
    const waiting: Assignable[] = [{ id: "next", requirements: { languages: ["typescript"] }, requirePlan: true }];
    const full = server("server-w", { activeTasks: 1, capabilities: { languages: ["typescript"], max_concurrent_tasks: 1 } as Candidate["capabilities"] });
    const world = (status: TaskRow["status"]) =>
      memoryReads({ tasks: [task("t", { status, assignedServerId: "server-w" }), task("next", { requirements: {} })], waiting, servers: [full] });
    const failed = await plan(world("running"), { op: "fail", taskId: "t", error: "broke", code: null });
    expect(failed.effects?.task?.after).toMatchObject({ status: "failed", result: { error: "broke" } });
    expect(failed.effects?.assignments?.map((a) => [a.taskId, a.requirePlan])).toEqual([["next", true]]);
    const cancelled = await plan(world("needs_human"), { op: "cancel", taskId: "t", reason: null }, { kind: "person", userId: "u", label: "u@example.com" });
    expect(cancelled.effects?.assignments).toEqual([]);
    expect(cancelled.effects?.task?.after.status).toBe("cancelled");
  });
});
