/**
 * The conformance kit's 1.0 checks of messages, tasks and their data (tests/compatibility at 1.0-dev;
 * test/a2a-conformance.test.ts lists what is ported and how, and the name format): core_operations/test_requirements.py's
 * MUST parameters that are not streams, test_task_lifecycle.py, test_task_history.py, test_data_model.py, test_artifacts.py.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { schemaErrors } from "./a2a-tck-schema";
import {
  STATES_ON_ANSWER,
  TERMINAL_STATES,
  a2a,
  answerAtOnce,
  complete,
  finishedTask,
  getTask,
  hubTask,
  listTasks,
  newTask,
  takeUp,
  taskWithHistory,
  tckWorld,
  uniqueContext,
  userMessage,
  w,
  workingTask,
} from "./a2a-tck-world";
import { rpcError, rpcResult } from "./a2a-wire";
import { call, until } from "./helpers";
import { expectOk } from "./task-world";

tckWorld();

const C = "tests/compatibility/core_operations";
const must = (id: string) => `${C}/test_requirements.py::test_must_requirement[${id}-jsonrpc]`;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * A message sent as the kit sends it, without returnImmediately, awaited while the project's agent works the task it
 * became and completes it with these contracts (the kit's own agent answers by script).
 */
async function sendAwaitingTheAgent(text: string, contracts?: Record<string, unknown>, configuration: Record<string, unknown> = {}) {
  const sending = a2a("SendMessage", { message: userMessage(text), configuration });
  const listed = await until(
    async () => (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=20`, { token: w.admin }))).json.tasks,
    (tasks: { id: string; title: string }[]) => tasks.some((t) => t.title === text),
    "the hub task the message became",
  );
  const { id } = listed.find((t) => t.title === text)!;
  await takeUp(id);
  await complete(id, contracts ? { $schema: "orchestratia/task-result/v1", summary: "Done", contracts } : undefined);
  return { id, result: rpcResult(await sending) };
}

describe("test_requirements.py's MUST requirements on JSON-RPC, but streams", () => {
  it(`[${must("CORE-SEND-001")} | ${must("CORE-EXECUTION-MODE-001")}] {CORE-SEND-001, CORE-EXECUTION-MODE-001} answers a blocking SendMessage with the task once it has finished, a SendMessageResponse`, async () => {
    const { id, result } = await sendAwaitingTheAgent(`Hello from TCK ${crypto.randomUUID().slice(0, 8)}`, undefined, { returnImmediately: false });
    expect(schemaErrors("Send Message Response", result)).toEqual([]);
    expect(result.task).toMatchObject({ id, status: { state: "TASK_STATE_COMPLETED" } });
  });

  it(`[${must("CORE-EXECUTION-MODE-002")}] {CORE-EXECUTION-MODE-002} answers returnImmediately at once, with the task before any agent has it`, async () => {
    const result = rpcResult(await a2a("SendMessage", { message: userMessage("Non-blocking request"), configuration: answerAtOnce }));
    expect(schemaErrors("Send Message Response", result)).toEqual([]);
    expect(result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  it(`[${must("CORE-SEND-003")}] {CORE-SEND-003} answers a message whose one part is of a media type it does not take with ContentTypeNotSupportedError, -32005`, async () => {
    const before = (await listTasks({})).totalSize;
    const message = userMessage("", { parts: [{ raw: "dGNr", mediaType: "application/x-unsupported-tck-type" }] });
    // The kit's runner takes any answer but an error here, against the requirement it records; the spec asks for the error.
    rpcError(await a2a("SendMessage", { message, configuration: answerAtOnce }), -32005);
    expect((await listTasks({})).totalSize).toBe(before);
  });

  it.each([
    ["CORE-GET-002", "CORE-GET-002", "GetTask"],
    ["CORE-CANCEL-003", "CORE-CANCEL-003", "CancelTask"],
  ])(
    `[${C}/test_requirements.py::test_must_requirement[%s-jsonrpc]] {%s} answers %s of a task that does not exist with TaskNotFoundError, -32001`,
    async (_, _id, method) => {
      rpcError(await a2a(method, { id: `tck-nonexistent-${crypto.randomUUID()}` }), -32001);
    },
  );

  it(`[${must("CORE-LIST-001")} | ${must("CORE-LIST-003")}] {CORE-LIST-001, CORE-LIST-003} lists a context's tasks as a ListTasksResponse, the caller's project's only`, async () => {
    const contextId = uniqueContext("tck-test-context");
    const mine = await newTask("Listed", { contextId });
    const result = await listTasks({ contextId });
    expect(schemaErrors("List Tasks Response", result)).toEqual([]);
    expect(result.tasks.map((t: { id: string }) => t.id)).toEqual([mine.id]);
    const outsider = await a2a("ListTasks", { contextId }, { credential: w.outsider.token });
    expect(outsider.status).toBe(404);
  });

  it(`[${must("CORE-LIST-002")} | ${must("CORE-LIST-004")} | ${must("CORE-LIST-005")}] {CORE-LIST-002, CORE-LIST-004, CORE-LIST-005} pages with pageSize, ends with an empty nextPageToken and leaves artifacts out`, async () => {
    const contextId = uniqueContext("tck-pages");
    for (const i of [1, 2, 3]) await newTask(`Paged ${i}`, { contextId });
    const first = await listTasks({ contextId, pageSize: 2 });
    expect(schemaErrors("List Tasks Response", first)).toEqual([]);
    expect(first).toMatchObject({ pageSize: 2, nextPageToken: expect.stringMatching(/.+/) });
    expect(await listTasks({ contextId, pageSize: 100 })).toMatchObject({ pageSize: 3, nextPageToken: "" });
    const done = await finishedTask();
    const listed = await listTasks({ contextId: done.contextId, includeArtifacts: false });
    expect(listed.tasks.map((t: { artifacts?: unknown[] }) => t.artifacts ?? [])).toEqual([[]]);
  });

  it(`[${must("CORE-MULTI-001a")} | ${must("CORE-MULTI-003")}] {CORE-MULTI-001a, CORE-MULTI-003} gives a message without contextId a generated one, and each new task an id of its own`, async () => {
    const [one, two] = [await newTask("Message without contextId"), await newTask("Message without contextId")];
    for (const task of [one, two]) expect(task.contextId).toMatch(/\S/);
    expect(one.id).not.toBe(two.id);
    expect(one.contextId).not.toBe(two.contextId);
  });

  it(`[${must("CORE-MULTI-002a")}] {CORE-MULTI-002a} takes a contextId the client chose, and keeps it`, async () => {
    const contextId = `tck-client-context-${crypto.randomUUID()}`;
    expect((await newTask("Message with client contextId", { contextId })).contextId).toBe(contextId);
  });

  it(`[${must("CORE-MULTI-004")}] {CORE-MULTI-004} answers a message naming a task that does not exist with TaskNotFoundError, -32001`, async () => {
    const message = userMessage("Message to invalid task", { taskId: `tck-nonexistent-${crypto.randomUUID()}` });
    rpcError(await a2a("SendMessage", { message, configuration: answerAtOnce }), -32001);
  });
});

describe("test_task_lifecycle.py, test_task_history.py", () => {
  const L = `${C}/test_task_lifecycle.py`;

  it(`[${L}::TestGetTask::test_get_task_returns_current_state[jsonrpc]] {CORE-GET-001} returns a task in its current state, as it moves`, async () => {
    const task = await workingTask("Task to follow");
    await complete(task.id);
    expect(await getTask(task.id)).toMatchObject({ id: task.id, status: { state: "TASK_STATE_COMPLETED" } });
  });

  it(`[${L}::TestCancelTask::test_cancel_task_returns_updated_state[jsonrpc]] {CORE-CANCEL-001} cancels a task its agent is working and returns it canceled`, async () => {
    const task = await workingTask("Task to cancel while worked");
    expect(rpcResult(await a2a("CancelTask", { id: task.id }))).toMatchObject({ id: task.id, status: { state: "TASK_STATE_CANCELED" } });
    expect((await hubTask(task.id)).status).toBe("cancelled");
  });

  it(`[${L}::TestMultiTurn::test_infer_context_from_task[jsonrpc]] {CORE-MULTI-005} takes a follow-up naming only the task, in the task's context`, async () => {
    const task = await workingTask("Task to follow up");
    const result = rpcResult(await a2a("SendMessage", { message: userMessage("Follow-up message", { taskId: task.id }), configuration: answerAtOnce }));
    expect(result.task).toMatchObject({ id: task.id, contextId: task.contextId });
    expect(STATES_ON_ANSWER).toContain(result.task.status.state);
  });

  it(`[${L}::TestMultiTurn::test_reject_mismatching_context[jsonrpc]] {CORE-MULTI-006} refuses a follow-up whose contextId is not its task's, on a task still open too`, async () => {
    const open = await workingTask("Task with its own context");
    for (const task of [await finishedTask(), open]) {
      const message = userMessage("Mismatched context test", { taskId: task.id, contextId: `tck-wrong-context-${crypto.randomUUID()}` });
      const reply = await a2a("SendMessage", { message, configuration: answerAtOnce });
      expect(reply.json.error?.code, reply.text).toBeDefined();
    }
    expect((await hubTask(open.id)).status).toBe("running");
  });

  it(`[${C}/test_task_history.py::TestHistoryLengthLimit::test_get_task_history_does_not_exceed_limit[jsonrpc]] {CORE-HIST-002} returns no more history than historyLength 1`, async () => {
    const task = await taskWithHistory();
    expect((await getTask(task.id)).history.length).toBeGreaterThan(1);
    expect((await getTask(task.id, { historyLength: 1 })).history).toHaveLength(1);
  });
});

describe("test_data_model.py: a SendMessage answer as the kit sends it", () => {
  const D = `${C}/test_data_model.py`;
  let answer: any;
  beforeAll(async () => {
    // Without returnImmediately, as the kit sends it: nobody works it, so it comes after the hub's wait.
    answer = rpcResult(await a2a("SendMessage", { message: userMessage("Hello from TCK data model test") }));
  });

  it(`[${D}::TestSendMessageResponseSchema::test_response_validates_against_schema] {DM-TASK-001, DM-TASK-002, DM-MSG-001, DM-MSG-002, DM-PART-001, DM-ART-001, DM-STATUS-001, DM-SERIAL-004} conforms to the kit's schema of SendMessageResponse`, () => {
    expect(answer.task.history.length).toBeGreaterThan(0);
    expect(schemaErrors("Send Message Response", answer)).toEqual([]);
  });

  it(`[${D}::TestCamelCaseFieldNames::test_no_snake_case_keys] {DM-SERIAL-001} names every field in camelCase`, () => {
    const keys = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) (keys.add(k), walk(x));
    };
    walk(answer);
    expect([...keys].filter((k) => /^[a-z]+(_[a-z]+)+$/.test(k))).toEqual([]);
  });

  it(`[${D}::TestEnumSerialization::test_enum_values_are_strings | ${D}::TestTimestampFormat::test_timestamps_are_iso8601_utc] {DM-SERIAL-002, DM-SERIAL-003} writes states and roles as ProtoJSON names, timestamps in ISO 8601 UTC`, () => {
    expect(answer.task.status.state).toMatch(/^TASK_STATE_[A-Z_]+$/);
    for (const m of answer.task.history) expect(m.role).toMatch(/^ROLE_(USER|AGENT)$/);
    expect(answer.task.status.timestamp).toMatch(ISO_UTC);
  });
});

describe("test_artifacts.py: the agent's result as artifacts (read with GetTask once it has finished)", () => {
  const A = `${C}/test_artifacts.py`;
  /** The kit's agent answers by script in the SendMessage answer; here the project's agent finishes the task first. */
  async function finishedWith(contracts: Record<string, unknown>) {
    const task = await newTask(`TCK artifact test ${crypto.randomUUID()}`);
    await takeUp(task.id);
    await complete(task.id, { $schema: "orchestratia/task-result/v1", summary: "Done", contracts });
    const got = await getTask(task.id);
    expect(TERMINAL_STATES).toContain(got.status.state);
    expect(schemaErrors("Task", got)).toEqual([]);
    return got;
  }

  it(`[${A}::TestTextArtifact::test_task_has_text_artifact[jsonrpc]] {DM-ART-001, DM-PART-001} gives a string the agent returned as a text part`, async () => {
    const got = await finishedWith({ text: { type: "text", data: "Generated text content" } });
    expect(got.artifacts[0]).toMatchObject({ artifactId: expect.stringMatching(/\S/), parts: [{ text: "Generated text content" }] });
  });

  it(`[${A}::TestDataArtifact::test_task_has_data_artifact[jsonrpc]] {DM-ART-001, DM-PART-001} gives an object the agent returned as a data part`, async () => {
    const got = await finishedWith({ data: { type: "data", data: { key: "value", count: 42 } } });
    expect(got.artifacts[0]).toMatchObject({ artifactId: expect.stringMatching(/\S/), parts: [{ data: { key: "value", count: 42 } }] });
  });
});
