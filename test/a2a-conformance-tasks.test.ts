/**
 * The conformance kit's checks of messages and tasks in tests/mandatory (test/a2a-conformance.test.ts lists what is
 * ported and how, and the name format): protocol/test_message_send_method.py, test_tasks_get_method.py,
 * test_tasks_cancel_method.py, test_state_transitions.py, the extended card, method mapping and transport equivalence.
 */
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, TaskState, type Task } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import { a2aClient } from "./a2a-client";
import {
  STATES_ON_ANSWER,
  a2a,
  answerAtOnce,
  ask,
  complete,
  getTask,
  hubTask,
  listTasks,
  newTask,
  takeUp,
  taskWithHistory,
  tckWorld,
  userMessage,
  w,
} from "./a2a-tck-world";
import { cardUrl, jsonRpc, postRpc, rpcError, rpcResult } from "./a2a-wire";
import { call, until } from "./helpers";
import { workerFetch } from "./mcp-client";
import { expectOk } from "./task-world";

tckWorld();

const P = "tests/mandatory/protocol";
const X = "tests/mandatory/transport/test_multi_transport_equivalence.py";

describe("SendMessage", () => {
  it(`[${P}/test_message_send_method.py::test_message_send_valid_text] answers a text message with the task it became, in a state the kit allows, while the project's agent works it`, async () => {
    const text = `Hello from TCK! ${crypto.randomUUID().slice(0, 8)}`;
    // Sent as the kit sends it, without returnImmediately: the answer may wait for the agent, which works the task meanwhile.
    const sending = a2a("SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } });
    const listed = await until(
      async () => (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=20`, { token: w.admin }))).json.tasks,
      (tasks: { id: string; title: string }[]) => tasks.some((t) => t.title === text),
      "the hub task the message became",
    );
    const { id } = listed.find((t) => t.title === text)!;
    await takeUp(id);
    await complete(id);
    const result = rpcResult(await sending);
    expect(result.task).toMatchObject({ id, contextId: expect.any(String), status: { state: expect.any(String) } });
    expect(result.task.contextId).not.toBe("");
    expect(STATES_ON_ANSWER).toContain(result.task.status.state);
  });

  it(`[${P}/test_message_send_method.py::test_message_send_invalid_params] answers a message without messageId, role or parts with invalid params, -32602, and creates no task`, async () => {
    const before = (await listTasks({})).totalSize;
    rpcError(await a2a("SendMessage", { message: { kind: "message" } }), -32602);
    expect((await listTasks({})).totalSize).toBe(before);
  });

  it(`[${P}/test_message_send_method.py::test_message_send_continue_task] continues a task waiting for input: a follow-up naming it answers the agent's question and returns the same task`, async () => {
    const task = await newTask("Task to continue");
    await takeUp(task.id);
    await ask(task.id, "Which colour?");
    expect((await getTask(task.id)).status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const result = rpcResult(
      await a2a("SendMessage", { message: userMessage("Follow-up message for the existing task", { taskId: task.id }), configuration: answerAtOnce }),
    );
    expect(result.task.id).toBe(task.id);
    expect(STATES_ON_ANSWER).toContain(result.task.status.state);
    expect((await hubTask(task.id)).status).toBe("running");
  });
});

describe("GetTask", () => {
  it(`[${P}/test_tasks_get_method.py::test_tasks_get_valid] returns a task by its id, with its status`, async () => {
    const task = await newTask("Task for get test");
    const got = await getTask(task.id);
    expect(got).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: "TASK_STATE_SUBMITTED" } });
  });

  it(`[${P}/test_tasks_get_method.py::test_tasks_get_with_history_length] returns the task's history when historyLength is given`, async () => {
    const task = await newTask("Task for get test");
    const got = await getTask(task.id, { historyLength: 1 });
    expect(got.id).toBe(task.id);
    expect(got.history).toHaveLength(1);
  });

  it(`[${P}/test_state_transitions.py::test_task_history_length] limits the history to the historyLength most recent messages`, async () => {
    const task = await taskWithHistory();
    const full = (await getTask(task.id)).history ?? [];
    const limited = (await getTask(task.id, { historyLength: 2 })).history ?? [];
    expect(full.length).toBeGreaterThan(2);
    expect(limited).toHaveLength(2);
    expect(limited).toEqual(full.slice(-2));
  });

  it(`[${P}/test_tasks_get_method.py::test_tasks_get_nonexistent] answers a task that does not exist, and a task of another project, alike with TaskNotFound, -32001`, async () => {
    rpcError(await a2a("GetTask", { id: "nonexistent-task-id" }), -32001);
    const elsewhere = rpcResult(
      await jsonRpc(w.other.id, "SendMessage", { message: userMessage("Elsewhere"), configuration: answerAtOnce }, { credential: w.admin }),
    ).task;
    const foreign = rpcError(await jsonRpc(w.project.id, "GetTask", { id: elsewhere.id }, { credential: w.admin }), -32001);
    const missing = rpcError(await jsonRpc(w.project.id, "GetTask", { id: crypto.randomUUID() }, { credential: w.admin }), -32001);
    expect(foreign.message.replace(elsewhere.id, "")).not.toContain("Another project");
    expect(typeof missing.message).toBe("string");
  });
});

describe("CancelTask", () => {
  it(`[${P}/test_tasks_cancel_method.py::test_tasks_cancel_valid] cancels a task and returns it canceled, as the hub's own task`, async () => {
    const task = await newTask("Task for cancel test");
    const canceled = rpcResult(await a2a("CancelTask", { id: task.id }));
    expect(canceled).toMatchObject({ id: task.id, status: { state: "TASK_STATE_CANCELED" } });
    expect((await hubTask(task.id)).status).toBe("cancelled");
  });

  it(`[${P}/test_tasks_cancel_method.py::test_tasks_cancel_nonexistent] answers a task that does not exist with TaskNotFound, -32001`, async () => {
    rpcError(await a2a("CancelTask", { id: "nonexistent-task-id" }), -32001);
  });
});

describe("extended agent card", () => {
  it(`[${P}/test_a2a_v030_new_methods.py::TestExtendedAgentCard::test_extended_agent_card_method_exists] is not declared, and GetExtendedAgentCard answers UnsupportedOperation, -32004`, async () => {
    const card: any = await (await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } })).json();
    expect(card.capabilities.extendedAgentCard ?? false).toBe(false);
    rpcError(await postRpc(w.project.id, JSON.stringify({ jsonrpc: "2.0", id: 6, method: "GetExtendedAgentCard" }), { credential: w.member.token }), -32004);
  });
});

describe("methods and transport", () => {
  it(`[${P}/test_a2a_v030_new_methods.py::TestMethodMappingCompliance::test_core_method_mapping_compliance | ${P}/test_a2a_v030_new_methods.py::TestTransportSpecificFeatures::test_jsonrpc_specific_features | ${X}::test_message_sending_equivalence] sends, gets and cancels a task through the SDK's own client, the task always carrying id and status`, async () => {
    const client = await a2aClient(w.project.id, w.member.token);
    const sent = await client.sendMessage(SendMessageRequest.fromJSON({ message: userMessage("Method mapping test"), configuration: answerAtOnce }));
    expect("status" in sent, JSON.stringify(sent)).toBe(true);
    const { id } = sent as Task;
    expect(id).toBeTypeOf("string");
    expect((await client.getTask(GetTaskRequest.fromJSON({ id }))).id).toBe(id);
    const canceled = await client.cancelTask(CancelTaskRequest.fromJSON({ id }));
    expect(canceled.id).toBe(id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it(`[${X}::test_task_retrieval_equivalence | ${X}::test_error_handling_equivalence] reads the same task alike through the 1.0 interface and the 0.3 one the card also declares`, async () => {
    const task = await newTask("Test message for transport equivalence validation");
    const current = await getTask(task.id);
    const legacy = rpcResult(await a2a("tasks/get", { id: task.id }, { version: null }));
    expect(legacy).toMatchObject({ kind: "task", id: current.id, contextId: current.contextId, status: { state: "submitted" } });
    rpcError(await a2a("tasks/get", { id: "invalid-nonexistent-task-id-12345" }, { version: null }), -32001);
    rpcError(await a2a("GetTask", { id: "invalid-nonexistent-task-id-12345" }), -32001);
  });

  it(`[${X}::test_concurrent_operation_equivalence] makes concurrent messages into distinct tasks`, async () => {
    const tasks = await Promise.all([1, 2, 3].map((i) => newTask(`Concurrent test message ${i} via HTTP/JSON-RPC`)));
    expect(new Set(tasks.map((t) => t.id)).size).toBe(3);
  });
});
