/**
 * The conformance kit's ListTasks checks, tests/mandatory/protocol/test_tasks_list_method.py (test/a2a-conformance.test.ts
 * lists what is ported and how, and the name format).
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  a2a,
  answerAtOnce,
  finishedTask,
  getTask,
  listTasks,
  newTask,
  sleep,
  takeUp,
  taskWithHistory,
  tckWorld,
  uniqueContext,
  userMessage,
  w,
} from "./a2a-tck-world";
import { jsonRpc, rpcError, rpcResult } from "./a2a-wire";

tckWorld();

const L = "tests/mandatory/protocol/test_tasks_list_method.py";

describe("ListTasks", () => {
  describe("basic listing", () => {
    it(`[${L}::TestBasicListing::test_list_all_tasks] lists the project's tasks with tasks, totalSize, pageSize and nextPageToken`, async () => {
      const task = await newTask("Test task for listing");
      const elsewhere = rpcResult(
        await jsonRpc(w.other.id, "SendMessage", { message: userMessage("Not listed here"), configuration: answerAtOnce }, { credential: w.admin }),
      ).task;
      const result = await listTasks({});
      expect(result.tasks).toBeInstanceOf(Array);
      expect(Number.isInteger(result.totalSize)).toBe(true);
      expect(Number.isInteger(result.pageSize)).toBe(true);
      expect(result).toHaveProperty("nextPageToken");
      const ids = result.tasks.map((t: { id: string }) => t.id);
      expect(ids).toContain(task.id);
      expect(ids).not.toContain(elsewhere.id);
      expect(result.tasks.find((t: { id: string }) => t.id === task.id)).toMatchObject({ status: expect.any(Object), contextId: task.contextId });
    });

    it(`[${L}::TestBasicListing::test_list_tasks_empty_when_none_exist] answers an empty page for a context with no tasks: no tasks, totalSize 0, pageSize 0, nextPageToken empty`, async () => {
      expect(await listTasks({ contextId: uniqueContext("empty-test") })).toEqual({ tasks: [], totalSize: 0, pageSize: 0, nextPageToken: "" });
    });

    it(`[${L}::TestBasicListing::test_list_tasks_validates_required_fields] gives every listed task an id and a status with a state`, async () => {
      await newTask("Task for field validation");
      const result = await listTasks({});
      expect(result.tasks.length).toBeGreaterThan(0);
      for (const task of result.tasks) {
        expect(task.id).toBeTypeOf("string");
        expect(task.status.state).toBeTypeOf("string");
      }
    });

    it(`[${L}::TestBasicListing::test_list_tasks_sorted_by_timestamp_descending] sorts tasks by their status timestamp, most recent first`, async () => {
      const contextId = uniqueContext("sorted");
      const first = await newTask("First task", { contextId });
      await sleep(200);
      const second = await newTask("Second task", { contextId });
      await sleep(200);
      const third = await newTask("Third task", { contextId });
      const listed = (await listTasks({ contextId })).tasks;
      expect(listed.map((t: { id: string }) => t.id)).toEqual([third.id, second.id, first.id]);
      const times = listed.map((t: { status: { timestamp: string } }) => Date.parse(t.status.timestamp));
      expect(times.every((t: number) => Number.isFinite(t))).toBe(true);
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });
  });

  describe("filtering", () => {
    it(`[${L}::TestFiltering::test_filter_by_context_id] filters by contextId`, async () => {
      const [one, two] = [uniqueContext("context-1"), uniqueContext("context-2")];
      const inOne = await newTask("Task in context 1", { contextId: one });
      const inTwo = await newTask("Task in context 2", { contextId: two });
      const result = await listTasks({ contextId: one });
      expect(result.tasks.map((t: { id: string }) => t.id)).toEqual([inOne.id]);
      expect(result.tasks.map((t: { id: string }) => t.id)).not.toContain(inTwo.id);
      expect(result.tasks.every((t: { contextId: string }) => t.contextId === one)).toBe(true);
    });

    it(`[${L}::TestFiltering::test_filter_by_status] filters by status, returning only tasks in that state`, async () => {
      const contextId = uniqueContext("status");
      const waiting = await newTask("Task for status filtering", { contextId });
      const working = await newTask("Task for status filtering, started", { contextId });
      await takeUp(working.id);
      const submitted = await listTasks({ status: "TASK_STATE_SUBMITTED" });
      expect(submitted.tasks.every((t: { status: { state: string } }) => t.status.state === "TASK_STATE_SUBMITTED")).toBe(true);
      expect(submitted.tasks.map((t: { id: string }) => t.id)).toContain(waiting.id);
      expect(submitted.tasks.map((t: { id: string }) => t.id)).not.toContain(working.id);
      const inContext = await listTasks({ contextId, status: "TASK_STATE_WORKING" });
      expect(inContext.tasks.map((t: { id: string }) => t.id)).toEqual([working.id]);
    });

    it(`[${L}::TestFiltering::test_filter_by_last_updated_after] filters by statusTimestampAfter, leaving out tasks whose status is older`, async () => {
      const contextId = uniqueContext("after");
      const older = await newTask("Task created before timestamp", { contextId });
      await sleep(100);
      const after = new Date().toISOString();
      await sleep(100);
      const newer = await newTask("Task created after timestamp", { contextId });
      const result = await listTasks({ contextId, statusTimestampAfter: after });
      expect(result.tasks.map((t: { id: string }) => t.id)).toEqual([newer.id]);
      expect(result.tasks.map((t: { id: string }) => t.id)).not.toContain(older.id);
      for (const task of result.tasks) expect(Date.parse(task.status.timestamp)).toBeGreaterThanOrEqual(Date.parse(after));
      expect((await listTasks({ statusTimestampAfter: after })).tasks.map((t: { id: string }) => t.id)).toContain(newer.id);
    });

    it(`[${L}::TestFiltering::test_combined_filters] applies contextId and status together`, async () => {
      const contextId = uniqueContext("combined-test");
      const task = await newTask("Task for combined filtering", { contextId });
      await newTask("Task for combined filtering, canceled", { contextId }).then((t) => a2a("CancelTask", { id: t.id }));
      const result = await listTasks({ contextId, status: task.status.state });
      expect(result.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
      expect(result.tasks.every((t: any) => t.contextId === contextId && t.status.state === task.status.state)).toBe(true);
    });
  });

  describe("pagination", () => {
    const contextId = uniqueContext("pagination-test");
    let created: string[] = [];
    beforeAll(async () => {
      created = [];
      for (const i of [0, 1, 2, 3, 4]) created.push((await newTask(`Task ${i} for pagination`, { contextId })).id);
    });

    it(`[${L}::TestPagination::test_default_page_size] returns at most 50 tasks when no pageSize is given, and a pageSize equal to the tasks returned`, async () => {
      const result = await listTasks({});
      expect(result.pageSize).toBe(Math.min(50, result.totalSize));
      expect(result.tasks).toHaveLength(result.pageSize);
    });

    it(`[${L}::TestPagination::test_custom_page_size] returns pageSize tasks and a nextPageToken when there are more`, async () => {
      const result = await listTasks({ contextId, pageSize: 2 });
      expect(result.pageSize).toBe(2);
      expect(result.tasks).toHaveLength(2);
      expect(result.nextPageToken).toBeTypeOf("string");
      expect(result.nextPageToken).not.toBe("");
    });

    it(`[${L}::TestPagination::test_page_token_navigation] walks every page with pageToken, no task twice, until an empty nextPageToken`, async () => {
      const seen: string[] = [];
      let pageToken: string | undefined;
      for (let page = 0; page < 5; page++) {
        const result = await listTasks({ contextId, pageSize: 2, ...(pageToken ? { pageToken } : {}) });
        seen.push(...result.tasks.map((t: { id: string }) => t.id));
        pageToken = result.nextPageToken;
        if (pageToken === "") break;
      }
      expect(pageToken).toBe("");
      expect(seen).toEqual([...created].reverse());
    });

    it(`[${L}::TestPagination::test_last_page_detection] says the last page is the last with an empty nextPageToken`, async () => {
      const contextId = uniqueContext("last-page-test");
      for (const i of [0, 1, 2]) await newTask(`Task ${i} for last page test`, { contextId });
      expect(await listTasks({ contextId, pageSize: 10 })).toMatchObject({ totalSize: 3, pageSize: 3, nextPageToken: "" });
    });

    it(`[${L}::TestPagination::test_total_size_accuracy] counts every matching task in totalSize, not only the page's`, async () => {
      expect(await listTasks({ contextId, pageSize: 2 })).toMatchObject({ totalSize: 5, pageSize: 2, nextPageToken: expect.stringMatching(/.+/) });
    });

    it(`[${L}::TestEdgeCasesAndErrors::test_default_page_size_is_50] defaults pageSize to 50`, async () => {
      const contextId = uniqueContext("default-pagesize-test");
      for (let batch = 0; batch < 6; batch++) {
        await Promise.all(Array.from({ length: 10 }, (_, i) => newTask(`Task ${batch * 10 + i} for default pageSize test`, { contextId })));
      }
      const result = await listTasks({ contextId });
      expect(result).toMatchObject({ totalSize: 60, pageSize: 50 });
      expect(result.tasks).toHaveLength(50);
      expect(result.nextPageToken).not.toBe("");
    });
  });

  describe("history", () => {
    const inHistoryContext = async (historyLength: number) => {
      const task = await taskWithHistory();
      const result = await listTasks({ contextId: task.contextId, historyLength });
      return result.tasks.find((t: { id: string }) => t.id === task.id);
    };

    it(`[${L}::TestHistoryLimiting::test_history_length_zero] leaves history out with historyLength 0`, async () => {
      const listed = await inHistoryContext(0);
      expect(listed.history ?? []).toEqual([]);
    });

    it(`[${L}::TestHistoryLimiting::test_history_length_custom] returns at most historyLength messages of history`, async () => {
      const listed = await inHistoryContext(3);
      expect((listed.history ?? []).length).toBeLessThanOrEqual(3);
    });

    it(`[${L}::TestHistoryLimiting::test_history_length_exceeds_actual] returns all the history there is when historyLength exceeds it`, async () => {
      const task = await taskWithHistory();
      const full = (await getTask(task.id)).history;
      expect((await inHistoryContext(100)).history).toEqual(full);
    });
  });

  describe("artifacts", () => {
    it(`[${L}::TestArtifactInclusion::test_artifacts_excluded_by_default] leaves artifacts out unless asked`, async () => {
      const task = await finishedTask();
      const listed = (await listTasks({ contextId: task.contextId })).tasks;
      expect(listed.map((t: { id: string }) => t.id)).toEqual([task.id]);
      // The kit takes an empty list as well as none.
      for (const t of listed) expect(t.artifacts ?? []).toEqual([]);
    });

    it(`[${L}::TestArtifactInclusion::test_artifacts_included_when_requested] includes the artifacts with includeArtifacts`, async () => {
      const task = await finishedTask();
      const got = await getTask(task.id);
      expect(got.artifacts?.length).toBeGreaterThan(0);
      const listed = (await listTasks({ contextId: task.contextId, includeArtifacts: true })).tasks;
      expect(listed[0].artifacts).toEqual(got.artifacts);
    });
  });

  describe("edge cases and errors", () => {
    it.each([
      ["test_invalid_page_token_error", "an invalid pageToken", { pageToken: "invalid-token-xyz" }],
      ["test_invalid_status_error", "an invalid status", { status: "INVALID_STATUS" }],
      ["test_negative_page_size_error", "a negative pageSize", { pageSize: -1 }],
      ["test_zero_page_size_error", "a pageSize of 0", { pageSize: 0 }],
      ["test_out_of_range_page_size_error", "a pageSize over 100", { pageSize: 101 }],
      ["test_negative_history_length_error", "a negative historyLength", { historyLength: -1 }],
      ["test_invalid_timestamp_error", "an invalid statusTimestampAfter", { statusTimestampAfter: "-1" }],
    ])(`[${L}::TestEdgeCasesAndErrors::%s] answers %s with invalid params, -32602`, async (_ref, _, params) => {
      rpcError(await a2a("ListTasks", params), -32602);
    });
  });
});
