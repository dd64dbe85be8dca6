/**
 * The conformance kit's streaming checks (test/a2a-conformance.test.ts lists what is ported and how, and the name
 * format): tests/mandatory's transport_specific_features, and tests/compatibility's jsonrpc/test_sse_streaming.py,
 * test_task_lifecycle.py's subscriptions, test_multi_stream.py, test_stream_ordering.py, the streaming MUST parameters
 * of test_requirements.py and test_transport_behavior.py's TestJsonRpcStreaming. Where the kit's agent ends a task by
 * script, the project's agent completes it, and the stream then ends.
 */
import { describe, expect, it } from "vitest";
import { schemaErrors } from "./a2a-tck-schema";
import { a2a, complete, finishedTask, sleep, takeUp, tckWorld, userMessage, w, workingTask } from "./a2a-tck-world";
import { rpcResult, rpcStream } from "./a2a-wire";

tckWorld();

const C = "tests/compatibility";
const STREAM_KEYS = ["task", "message", "statusUpdate", "artifactUpdate"];
const ORDER: Record<string, number> = {
  TASK_STATE_SUBMITTED: 0,
  TASK_STATE_WORKING: 1,
  TASK_STATE_INPUT_REQUIRED: 1,
  TASK_STATE_AUTH_REQUIRED: 1,
  TASK_STATE_COMPLETED: 2,
  TASK_STATE_FAILED: 2,
  TASK_STATE_CANCELED: 2,
  TASK_STATE_REJECTED: 2,
};
const stateOf = (event: any): string | undefined => event.result?.statusUpdate?.status?.state ?? event.result?.task?.status?.state;

const open = (method: string, params: unknown) => rpcStream(w.project.id, method, params, { credential: w.member.token });
type Stream = Awaited<ReturnType<typeof open>>;

/** The rest of a stream's events, until it ends (failing if it has not within ten seconds). */
async function rest(stream: Stream, into: any[] = []) {
  const ended = (async () => {
    for await (const event of stream.events) into.push(event.data);
  })();
  await Promise.race([ended, sleep(10_000).then(() => Promise.reject(new Error(`the stream did not end: ${JSON.stringify(into)}`)))]);
  return into;
}

/** SendStreamingMessage as the kit sends it, the project's agent taking the task up and completing it once it is streamed. */
async function streamedToTheEnd(text: string) {
  const stream = await open("SendStreamingMessage", { message: userMessage(text) });
  const first = await stream.events.next();
  expect(first.done, "a first event").toBe(false);
  const id = first.value!.data.result.task.id;
  await takeUp(id);
  await complete(id);
  return { stream, id, events: await rest(stream, [first.value!.data]) };
}

/** A subscription to a task, its first event read. */
async function subscribed(id: string) {
  const stream = await open("SubscribeToTask", { id });
  expect(stream.response.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
  const first = await stream.events.next();
  expect(first.done, "a first event").toBe(false);
  return { stream, first: first.value!.data };
}

describe("SendStreamingMessage", () => {
  it(`[tests/mandatory/protocol/test_a2a_v030_transport_compliance.py::test_transport_specific_features] streams SendStreamingMessage as server-sent events, each a JSON-RPC response with the request's id, from the task to its end`, async () => {
    const stream = await open("SendStreamingMessage", { message: userMessage("Stream this") });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const first = await stream.events.next();
    expect(first.done).toBe(false);
    const events: any[] = [first.value!.data];
    const taskId = events[0].result.task.id;
    expect(events[0]).toMatchObject({ jsonrpc: "2.0", id: stream.id, result: { task: { id: taskId, status: { state: "TASK_STATE_SUBMITTED" } } } });
    rpcResult(await a2a("CancelTask", { id: taskId }));
    await rest(stream, events);
    for (const event of events) expect(event).toMatchObject({ jsonrpc: "2.0", id: stream.id });
    expect(events.at(-1).result.statusUpdate).toMatchObject({ taskId, status: { state: "TASK_STATE_CANCELED" } });
  });

  const R = (id: string) => `${C}/core_operations/test_requirements.py::test_must_requirement[${id}-jsonrpc]`;
  const S = `${C}/jsonrpc/test_sse_streaming.py::TestSseStreamingFormat`;
  it(`[${R("CORE-STREAM-001")} | ${R("CORE-STREAM-002")} | ${R("CORE-STREAM-003")} | ${S}::test_streaming_events_have_jsonrpc_envelope | ${S}::test_streaming_events_contain_stream_response | ${C}/core_operations/test_transport_behavior.py::TestJsonRpcStreaming::test_streaming_content_type] {CORE-STREAM-001, CORE-STREAM-002, CORE-STREAM-003, JSONRPC-SSE-001} streams text/event-stream, each event a JSON-RPC response holding a StreamResponse, from the task to its terminal state (a task, never a lone message)`, async () => {
    const { stream, id, events } = await streamedToTheEnd("Stream task lifecycle");
    expect(stream.response.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    expect(events[0].result.task.id).toBe(id);
    for (const [i, event] of events.entries()) {
      expect(event, `event ${i}`).toMatchObject({ jsonrpc: "2.0", id: stream.id, result: expect.any(Object) });
      expect(
        Object.keys(event.result).filter((k) => STREAM_KEYS.includes(k)),
        `event ${i}`,
      ).toHaveLength(1);
      expect(schemaErrors("Stream Response", event.result), `event ${i}`).toEqual([]);
    }
    expect(stateOf(events.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it(`[${C}/core_operations/test_stream_ordering.py::TestStreamEventOrdering::test_streaming_event_ordering[jsonrpc]] {STREAM-ORDER-001} streams the task's states in the order they came, never back`, async () => {
    const { events } = await streamedToTheEnd("Stream hello from TCK");
    const states = events.map(stateOf).filter((s): s is string => s !== undefined);
    expect(states.length).toBeGreaterThan(1);
    const ranks = states.map((s) => ORDER[s] ?? -1);
    expect(ranks, states.join(" ")).toEqual([...ranks].sort((a, b) => a - b));
    for (const event of events) expect(schemaErrors("Stream Response", event.result)).toEqual([]);
  });
});

describe("SubscribeToTask", () => {
  const L = `${C}/core_operations/test_task_lifecycle.py::TestSubscribeLifecycle`;
  const S = `${C}/jsonrpc/test_sse_streaming.py::TestSseSubscribeToTask`;

  it(`[${S}::test_subscribe_nonexistent_task_returns_error | ${C}/core_operations/test_requirements.py::test_must_requirement[STREAM-SUB-004-jsonrpc]] {STREAM-SUB-004} answers a subscription to a task that does not exist with TaskNotFoundError, -32001, before any stream`, async () => {
    const stream = await open("SubscribeToTask", { id: `tck-nonexistent-${crypto.randomUUID()}` });
    expect(stream.response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await stream.response.json()).toMatchObject({ jsonrpc: "2.0", id: stream.id, error: { code: -32001 } });
  });

  it(`[${S}::test_subscribe_first_event_is_task] {STREAM-SUB-001} streams the task itself first`, async () => {
    const task = await workingTask("Task to subscribe to");
    const { stream, first } = await subscribed(task.id);
    expect(first).toMatchObject({ jsonrpc: "2.0", id: stream.id, result: { task: { id: task.id, status: { state: "TASK_STATE_WORKING" } } } });
    expect(schemaErrors("Stream Response", first.result)).toEqual([]);
    await stream.events.return(undefined);
  });

  it(`[${L}::test_subscribe_terminates_at_terminal_state[jsonrpc]] {STREAM-SUB-002} ends the subscription once the task finishes, its last event in a terminal state`, async () => {
    const task = await workingTask("Task to see finish");
    const { stream, first } = await subscribed(task.id);
    await complete(task.id);
    const events = await rest(stream, [first]);
    expect(stateOf(events.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it(`[${L}::test_subscribe_rejects_terminal_task[jsonrpc]] {STREAM-SUB-003} refuses a subscription to a finished task`, async () => {
    const task = await finishedTask();
    const stream = await open("SubscribeToTask", { id: task.id });
    expect(((await stream.response.json()) as any).error?.code).toBe(-32004);
  });
});

describe("several subscriptions to one task (test_multi_stream.py)", () => {
  const M = `${C}/core_operations/test_multi_stream.py::TestMultiStreamOrdering`;
  /** The events each subscription saw, the payloads only (the kit drops each request's id and jsonrpc). */
  const payloads = (events: any[]) => events.map((e) => JSON.stringify(e.result));

  it(`[${M}::test_events_broadcast_to_all_streams[jsonrpc] | ${M}::test_streams_receive_same_events_in_order[jsonrpc]] {STREAM-ORDER-002, STREAM-ORDER-003} sends every event to each subscription, the same events in the same order`, async () => {
    const task = await workingTask("Task two clients follow");
    const [one, two] = await Promise.all([subscribed(task.id), subscribed(task.id)]);
    await complete(task.id);
    const [seenByOne, seenByTwo] = await Promise.all([rest(one.stream, [one.first]), rest(two.stream, [two.first])]);
    expect(seenByOne.length).toBeGreaterThan(1);
    expect(payloads(seenByTwo)).toEqual(payloads(seenByOne));
    expect(stateOf(seenByOne.at(-1))).toBe("TASK_STATE_COMPLETED");
  });

  it(`[${M}::test_closing_one_stream_does_not_affect_others[jsonrpc]] {STREAM-ORDER-004} keeps one subscription going when another closes`, async () => {
    const task = await workingTask("Task one client leaves");
    const [leaving, staying] = await Promise.all([subscribed(task.id), subscribed(task.id)]);
    await leaving.stream.events.return(undefined);
    await complete(task.id);
    const events = await rest(staying.stream, [staying.first]);
    expect(stateOf(events.at(-1))).toBe("TASK_STATE_COMPLETED");
  });
});
