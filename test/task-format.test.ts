/** The task-format dialect (seeds/task-format.md): its status names, table by table and as list filters. */
import { beforeAll, describe, expect, it } from "vitest";
import { TASK_STATUSES } from "../src/domain/lifecycle";
import { STATUS_ALIASES, TASK_FORMAT_STATUS, TASK_FORMAT_STATUSES } from "../src/protocol/task-format";
import { call, expectProblem } from "./helpers";
import { createWorld, taskIn, type World } from "./task-world";

describe("task-format statuses", () => {
  it.each([
    ["pending", "pending"],
    ["assigned", "pending"],
    ["planning", "in_progress"],
    ["running", "in_progress"],
    ["plan_review", "input_required"],
    ["needs_human", "input_required"],
    ["done", "completed"],
    ["failed", "failed"],
    ["cancelled", "cancelled"],
  ] as const)("names the hub's %s %s", (hub, seed) => {
    expect(TASK_FORMAT_STATUS[hub]).toBe(seed);
  });

  it("names every hub status with one of the seed's six", () => {
    expect(Object.keys(TASK_FORMAT_STATUS).sort()).toEqual([...TASK_STATUSES].sort());
    expect(new Set(Object.values(TASK_FORMAT_STATUS))).toEqual(new Set(TASK_FORMAT_STATUSES));
  });

  it("filters by the seed's own names for the statuses they stand for", () => {
    expect(STATUS_ALIASES).toEqual({ in_progress: ["planning", "running"], completed: ["done"], input_required: ["plan_review", "needs_human"] });
  });
});

describe("listing by task-format status", () => {
  let w: World;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    w = await createWorld("Task format");
    for (const status of ["pending", "running", "needs_human", "plan_review", "done"]) ids[status] = (await taskIn(w, status)).id;
  });
  const listed = async (status: string) => {
    const reply = await call(`/api/v1/tasks?project_id=${w.project.id}&status=${status}`, { token: w.member.token });
    expect(reply.status, reply.text).toBe(200);
    return reply.json.tasks.map((t: any) => t.id).sort();
  };

  it("takes in_progress, completed and input_required beside the hub's own names", async () => {
    expect(await listed("in_progress")).toEqual([ids.running].sort());
    expect(await listed("input_required")).toEqual([ids.needs_human, ids.plan_review].sort());
    expect(await listed("completed")).toEqual([ids.done]);
    expect(await listed("completed,pending")).toEqual([ids.done, ids.pending].sort());
    expect(await listed("needs_human")).toEqual([ids.needs_human]);
  });

  it("refuses other names, listing the ones it takes", async () => {
    const reply = await call(`/api/v1/tasks?project_id=${w.project.id}&status=finished`, { token: w.member.token });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors[0].message).toContain("input_required");
  });
});
