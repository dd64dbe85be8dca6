/**
 * The conformance kit's JSON-RPC and error checks (test/a2a-conformance.test.ts lists what is ported and how, and the
 * name format): tests/mandatory/jsonrpc, quality/test_error_validation_enhanced.py; tests/compatibility/jsonrpc,
 * core_operations/test_error_handling.py and test_transport_behavior.py's JSON-RPC format and service parameters.
 */
import { describe, expect, it } from "vitest";
import { schemaErrors } from "./a2a-tck-schema";
import { STATES_ON_ANSWER, a2a, answerAtOnce, finishedTask, hubTask, newTask, tckWorld, userMessage, w } from "./a2a-tck-world";
import { cardUrl, postRpc, rpcError, rpcResult, type RpcOptions } from "./a2a-wire";
import { workerFetch } from "./mcp-client";

tckWorld();

const C = "tests/compatibility";
const J = "tests/mandatory/jsonrpc";
const Q = "tests/mandatory/quality/test_error_validation_enhanced.py";

describe("JSON-RPC 2.0", () => {
  const post = (body: string) => postRpc(w.project.id, body, { credential: w.member.token });

  it(`[${J}/test_json_rpc_compliance.py::test_rejects_malformed_json | ${J}/test_protocol_violations.py::test_raw_invalid_json] answers malformed JSON with a parse error, -32700, and a null id`, async () => {
    for (const malformed of [
      '{"jsonrpc": "2.0", "method": "SendMessage", "params": {"foo": "bar"}',
      '{"jsonrpc": "2.0", "method": "SendMessage", "params": {"unclosed_object": true',
      "{",
    ]) {
      const reply = await post(malformed);
      // The kit takes an HTTP 400 as well as a 200 here, as long as the body is the JSON-RPC parse error.
      expect([200, 400], reply.text).toContain(reply.status);
      expect(reply.json, reply.text).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700, message: expect.stringMatching(/\S/) } });
    }
  });

  it.each([
    [
      `${J}/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests[invalid_request0--32600]`,
      "a jsonrpc other than 2.0",
      -32600,
      { jsonrpc: "aaa", method: "SendMessage", params: {} },
    ],
    [
      `${J}/test_protocol_violations.py::test_invalid_jsonrpc_version`,
      "jsonrpc 1.0",
      -32600,
      { jsonrpc: "1.0", id: "v1", method: "SendMessage", params: { message: userMessage("Hello from protocol violation test!") } },
    ],
    [`${J}/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests[invalid_request1--32600]`, "no method", -32600, { jsonrpc: "2.0", params: {} }],
    [
      `${J}/test_protocol_violations.py::test_missing_method_field`,
      "no method, with an id",
      -32600,
      { jsonrpc: "2.0", id: "no-method", params: { message: userMessage("Hello from protocol violation test!") } },
    ],
    [
      `${J}/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests[invalid_request2--32601]`,
      "an unknown method",
      -32601,
      { jsonrpc: "2.0", method: "SendMessageXXX", id: "3", params: {} },
    ],
    [
      `${J}/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests[invalid_request3--32600]`,
      "an id that is an object",
      -32600,
      { jsonrpc: "2.0", method: "SendMessage", params: {}, id: { bad: "type" } },
    ],
    [
      `${J}/test_json_rpc_compliance.py::test_rejects_invalid_json_rpc_requests[invalid_request4--32602]`,
      "a params member with an empty name",
      -32602,
      { jsonrpc: "2.0", method: "SendMessage", id: "4", params: { "": "not_a_dict" } },
    ],
  ])("[%s] answers a request with %s with %i, in an HTTP 200", async (_ref, _, code, request) => {
    const reply = await post(JSON.stringify(request));
    rpcError(reply, code);
    // The id is echoed when the request carried a valid one, and null otherwise (JSON-RPC 2.0, section 5).
    const sent = (request as { id?: unknown }).id;
    expect(reply.json.id).toBe(typeof sent === "string" ? sent : null);
  });

  it(`[${J}/test_json_rpc_compliance.py::test_rejects_unknown_method] answers an unknown method with -32601, echoing the request's id`, async () => {
    const reply = await a2a("nonexistent/method", {}, { id: "unknown-method-1" });
    rpcError(reply, -32601);
    expect(reply.json.id).toBe("unknown-method-1");
  });

  it(`[${J}/test_json_rpc_compliance.py::test_rejects_invalid_params] answers a SendMessage whose parts are not a list with invalid params, -32602`, async () => {
    rpcError(await a2a("SendMessage", { message: { parts: "invalid" } }), -32602);
  });

  it(`[${J}/test_protocol_violations.py::test_duplicate_request_ids] answers two requests with the same id each as a JSON-RPC response carrying that id`, async () => {
    const id = `duplicate-${crypto.randomUUID()}`;
    const first = await a2a("SendMessage", { message: userMessage("Hello from protocol violation test!"), configuration: answerAtOnce }, { id });
    expect(rpcResult(first).task.id).toBeTypeOf("string");
    expect(first.json.id).toBe(id);
    const second = await a2a("SendMessage", { message: userMessage("This is a different message with the same ID"), configuration: answerAtOnce }, { id });
    expect(second.json).toMatchObject({ jsonrpc: "2.0", id });
  });
});

describe("A2A error codes", () => {
  const pushMessageWords = (message: string) => {
    for (const word of ["push", "notification", "not", "supported"]) expect(message.toLowerCase()).toContain(word);
  };

  it(`[${J}/test_a2a_error_codes_enhanced.py::test_push_notification_not_supported_error_32003_enhanced] answers every push notification config method with PushNotificationNotSupported, -32003, as the card declares none`, async () => {
    const card = await (await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } })).json();
    expect((card as any).capabilities.pushNotifications ?? false).toBe(false);
    const task = await newTask("Test message for push notification error test");
    const configId = crypto.randomUUID();
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: task.id, id: configId, url: "https://test.example.com/webhook", token: "test-token" }],
      ["GetTaskPushNotificationConfig", { taskId: task.id, id: configId }],
      ["ListTaskPushNotificationConfigs", { taskId: task.id }],
      ["DeleteTaskPushNotificationConfig", { taskId: task.id, id: configId }],
    ] as const) {
      pushMessageWords(rpcError(await a2a(method, params), -32003).message);
    }
  });

  it(`[${J}/test_a2a_error_codes.py::test_push_notification_not_supported_error_32003] answers the 0.3 method tasks/pushNotificationConfig/set, sent without A2A-Version, with -32003 too`, async () => {
    const task = await newTask("Test message for push notification error test");
    const reply = await a2a(
      "tasks/pushNotificationConfig/set",
      { taskId: task.id, pushNotificationConfig: { url: "https://example.com/webhook", token: "test-token" } },
      { version: null },
    );
    pushMessageWords(rpcError(reply, -32003).message);
  });

  it(`[${J}/test_a2a_error_codes.py::test_unsupported_operation_error_32004 | ${C}/core_operations/test_task_lifecycle.py::TestMultiTurn::test_send_message_to_terminal_task[jsonrpc]] {CORE-SEND-002} refuses a message to a task that has finished with UnsupportedOperation, -32004, and leaves the task as it was`, async () => {
    const task = await finishedTask();
    const before = await hubTask(task.id);
    rpcError(await a2a("SendMessage", { message: userMessage("One more thing", { taskId: task.id }), configuration: answerAtOnce }), -32004);
    expect(await hubTask(task.id)).toMatchObject({ status: "done", updated_at: before.updated_at });
  });

  it(`[${J}/test_a2a_error_codes_enhanced.py::test_unsupported_operation_error_32004_enhanced] answers an operation it does not know with method not found, -32601, not -32004`, async () => {
    rpcError(await a2a("agent/customUnsupportedOperation", { testParameter: "value" }), -32601);
  });

  it(`[${J}/test_a2a_error_codes.py::test_content_type_not_supported_error_32005 | ${J}/test_a2a_error_codes_enhanced.py::test_content_type_not_supported_error_32005_enhanced | ${J}/test_a2a_error_codes_enhanced.py::test_unsupported_operation_error_32004_enhanced] takes a file of an unknown media type, odd output modes and unknown configuration without an internal error`, async () => {
    const attempts = [
      {
        message: userMessage("Please process this file", {
          parts: [
            { text: "Please process this file" },
            { raw: "VGVzdCBkYXRh", filename: "test.unsupported", mediaType: "application/x-totally-unsupported-format" },
          ],
        }),
        configuration: answerAtOnce,
      },
      {
        message: userMessage("Generate output in unsupported format"),
        configuration: { ...answerAtOnce, acceptedOutputModes: ["application/x-completely-unsupported-output-format"] },
      },
      {
        message: userMessage("Test message with extreme parameters"),
        configuration: { ...answerAtOnce, historyLength: 999999999, customUnsupportedField: "test-value", extremeConfiguration: { unsupportedFeature: true } },
      },
    ];
    for (const params of attempts) {
      const reply = await a2a("SendMessage", params);
      expect(reply.status, reply.text).toBe(200);
      if (reply.json.error) expect([-32005, -32602, -32004], reply.text).toContain(reply.json.error.code);
      else expect(STATES_ON_ANSWER).toContain(reply.json.result.task.status.state);
    }
  });

  it.each([
    [
      `${Q}::test_invalid_method_error_validation | ${Q}::test_error_response_completeness`,
      "an unknown 1.0 method",
      -32601,
      "invalid/nonexistent/method",
      {},
      {},
    ],
    [
      `${Q}::test_invalid_method_error_validation | ${Q}::test_error_response_completeness`,
      "an unknown method without A2A-Version",
      -32601,
      "completely/invalid/method",
      {},
      { version: null },
    ],
    [`${Q}::test_invalid_params_error_validation | ${Q}::test_error_response_completeness`, "GetTask without an id", -32602, "GetTask", {}, {}],
    [
      `${Q}::test_invalid_params_error_validation | ${Q}::test_error_response_completeness`,
      "tasks/get without an id",
      -32602,
      "tasks/get",
      {},
      { version: null },
    ],
    [
      `${Q}::test_nonexistent_resource_error_validation | ${Q}::test_error_response_completeness`,
      "GetTask of a task that does not exist",
      -32001,
      "GetTask",
      { id: "definitely-nonexistent-task-id-12345" },
      {},
    ],
    [
      `${Q}::test_nonexistent_resource_error_validation | ${Q}::test_error_response_completeness`,
      "tasks/get of a task that does not exist",
      -32001,
      "tasks/get",
      { id: "definitely-nonexistent-task-id-12345" },
      { version: null },
    ],
  ] as [string, string, number, string, unknown, Partial<RpcOptions>][])(
    "[%s] answers %s with a complete JSON-RPC 2.0 error: version, the request's id, the code %i and a message",
    async (_ref, _, code, method, params, options) => {
      const id = crypto.randomUUID();
      const reply = await a2a(method, params, { ...options, id });
      rpcError(reply, code);
      expect(reply.json.id).toBe(id);
    },
  );

  it(`[${Q}::test_error_consistency_across_methods] answers malformed task ids with an error, never a task, whatever the method`, async () => {
    for (const [method, options] of [
      ["GetTask", {}],
      ["CancelTask", {}],
      ["tasks/get", { version: null }],
      ["tasks/cancel", { version: null }],
    ] as const) {
      for (const params of [{ id: "" }, { id: 12345 }, { id: { invalid: "object" } }]) {
        const reply = await a2a(method, params, options);
        expect(reply.status, reply.text).toBe(200);
        expect([-32602, -32001], `${method} ${JSON.stringify(params)}: ${reply.text}`).toContain(reply.json.error?.code);
      }
    }
  });

  it(`[${C}/core_operations/test_task_lifecycle.py::TestCancelTask::test_cancel_terminal_task_returns_error[jsonrpc]] {CORE-CANCEL-002} answers a cancel of a task that has finished with TaskNotCancelable, -32002`, async () => {
    const task = await finishedTask();
    rpcError(await a2a("CancelTask", { id: task.id }), -32002);
    expect((await hubTask(task.id)).status).toBe("done");
  });
});

/** The google.rpc.ErrorInfo an A2A error carries in its data (spec 9.5), as the kit's validator finds it. */
function errorInfoOf(error: { data?: unknown }) {
  expect(Array.isArray(error.data), JSON.stringify(error)).toBe(true);
  return (error.data as { "@type"?: string }[]).find((d) => d?.["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
}
const A2A_REASONS = [
  "TASK_NOT_FOUND",
  "TASK_NOT_CANCELABLE",
  "PUSH_NOTIFICATION_NOT_SUPPORTED",
  "UNSUPPORTED_OPERATION",
  "CONTENT_TYPE_NOT_SUPPORTED",
  "INVALID_AGENT_RESPONSE",
  "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
  "EXTENSION_SUPPORT_REQUIRED",
  "VERSION_NOT_SUPPORTED",
];
const inRange = (code: number) => (code >= -32099 && code <= -32001) || (code >= -32700 && code <= -32600);
const missingTask = () => a2a("GetTask", { id: `tck-nonexistent-${crypto.randomUUID()}` });
const cancelMissing = () => a2a("CancelTask", { id: `tck-nonexistent-${crypto.randomUUID()}` });
const badVersion = () => a2a("SendMessage", { message: userMessage("version error code test") }, { version: "99.0" });

describe("A2A 1.0 errors on JSON-RPC (tests/compatibility)", () => {
  const E = `${C}/jsonrpc/test_error_codes.py::TestJsonRpcErrorCodeMappings`;
  const H = `${C}/core_operations/test_error_handling.py`;

  it(`[${E}::test_task_not_found_error | ${H}::TestJsonRpcErrorStructure::test_a2a_error_type_mappings] {JSONRPC-SSE-002} maps TaskNotFoundError to -32001`, async () => {
    rpcError(await missingTask(), -32001);
  });

  it(`[${E}::test_task_not_cancelable_error] {JSONRPC-SSE-002} answers a cancel of a task that does not exist with -32001 (the kit takes -32002 too)`, async () => {
    expect([-32001, -32002]).toContain(rpcError(await cancelMissing(), -32001).code);
  });

  it(`[${E}::test_push_notification_not_supported_error | ${H}::TestCapabilityPushNotifications::test_push_not_supported_jsonrpc] {JSONRPC-SSE-002, CORE-CAP-001} maps PushNotificationNotSupportedError to -32003`, async () => {
    const error = rpcError(await a2a("CreateTaskPushNotificationConfig", { taskId: "t", url: "https://example.com" }), -32003);
    expect(errorInfoOf(error)).toMatchObject({ reason: "PUSH_NOTIFICATION_NOT_SUPPORTED" });
  });

  it(`[${E}::test_unsupported_operation_error] {JSONRPC-SSE-002} maps UnsupportedOperationError to -32004 (a message to a finished task, streaming being supported)`, async () => {
    const task = await finishedTask();
    const error = rpcError(await a2a("SendMessage", { message: userMessage("One more", { taskId: task.id }), configuration: answerAtOnce }), -32004);
    expect(errorInfoOf(error)).toMatchObject({ reason: "UNSUPPORTED_OPERATION" });
  });

  it(`[${E}::test_content_type_not_supported_error] {JSONRPC-SSE-002} answers a body sent as text/plain with ContentTypeNotSupportedError, -32005`, async () => {
    const reply = await postRpc(
      w.project.id,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: userMessage("content type test") } }),
      {
        credential: w.member.token,
        headers: { "Content-Type": "text/plain" },
      },
    );
    // The kit reads the body whatever the HTTP status; the hub answers 400 with the JSON-RPC error.
    expect(reply.json, reply.text).toMatchObject({ jsonrpc: "2.0", error: { code: -32005, message: expect.stringMatching(/\S/) } });
    expect(errorInfoOf(reply.json.error)).toMatchObject({ reason: "CONTENT_TYPE_NOT_SUPPORTED" });
  });

  it(`[${E}::test_version_not_supported_error | ${H}::TestVersionErrors::test_unsupported_version_returns_error_jsonrpc] {JSONRPC-SSE-002, VER-SERVER-002} answers A2A-Version 99.0 with VersionNotSupportedError, -32009, and creates no task`, async () => {
    const before = rpcResult(await a2a("ListTasks", {})).totalSize;
    const error = rpcError(await badVersion(), -32009);
    expect(errorInfoOf(error)).toMatchObject({ reason: "VERSION_NOT_SUPPORTED" });
    expect(rpcResult(await a2a("ListTasks", {})).totalSize).toBe(before);
  });

  it.each([
    ["GetTask-nonexistent", missingTask],
    ["CancelTask-nonexistent", cancelMissing],
    ["SendMessage-bad-version", badVersion],
  ] as const)(
    `[${C}/jsonrpc/test_error_codes.py::TestJsonRpcErrorCodeRange::test_error_code_in_valid_range[%s]] {JSONRPC-SSE-002} answers with a code in A2A's range or JSON-RPC's`,
    async (_, trigger) => {
      const reply = await trigger();
      expect(reply.json.error, reply.text).toBeDefined();
      expect(inRange(reply.json.error.code), reply.text).toBe(true);
    },
  );

  describe("ErrorInfo", () => {
    const I = `${C}/jsonrpc/test_error_info.py::TestJsonRpcErrorInfo`;
    it(`[${I}::test_error_data_is_array | ${I}::test_data_contains_error_info | ${I}::test_error_info_valid | ${I}::test_error_info_reason_matches_condition | ${H}::TestJsonRpcErrorStructure::test_error_data_contains_error_info] {JSONRPC-ERR-003} gives TaskNotFoundError a data array holding ErrorInfo, domain a2a-protocol.org, reason TASK_NOT_FOUND`, async () => {
      const error = rpcError(await missingTask(), -32001);
      const info = errorInfoOf(error);
      expect(info, JSON.stringify(error)).toMatchObject({ domain: "a2a-protocol.org", reason: "TASK_NOT_FOUND" });
      expect(A2A_REASONS).toContain((info as { reason: string }).reason);
    });
  });

  it(`[${H}::TestJsonRpcErrorStructure::test_error_object_structure | ${H}::TestJsonRpcErrorStructure::test_a2a_error_codes_in_range] {JSONRPC-ERR-001, JSONRPC-ERR-002} words an A2A error as code, message and data only, its code in -32001..-32099`, async () => {
    const { error } = (await missingTask()).json;
    expect(
      Object.keys(error).every((k) => ["code", "message", "data"].includes(k)),
      JSON.stringify(error),
    ).toBe(true);
    expect(Number.isInteger(error.code) && typeof error.message === "string").toBe(true);
    expect(error.code).toBeGreaterThanOrEqual(-32099);
    expect(error.code).toBeLessThanOrEqual(-32001);
  });

  it(`[${H}::TestCoreErrorStructure::test_error_has_code_and_message_jsonrpc] {CORE-ERR-001} answers an unknown method with an error that has a code and a message`, async () => {
    const reply = await a2a("NonExistentMethod", {});
    expect(rpcError(reply, -32601)).toMatchObject({ code: expect.any(Number), message: expect.stringMatching(/\S/) });
  });

  it(`[${H}::TestCoreInputValidation::test_malformed_request_rejected_jsonrpc] {CORE-ERR-002} refuses a SendMessage without a message before doing anything`, async () => {
    const before = rpcResult(await a2a("ListTasks", {})).totalSize;
    expect((await a2a("SendMessage", {})).json.error?.code).toBe(-32602);
    expect(rpcResult(await a2a("ListTasks", {})).totalSize).toBe(before);
  });

  it(`[${H}::TestCapabilityExtendedCard::test_extended_card_not_supported_jsonrpc] {CORE-CAP-003} answers GetExtendedAgentCard with an error, as the card declares no extended card`, async () => {
    const card: any = await (await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } })).json();
    expect(card.capabilities.extendedAgentCard ?? false).toBe(false);
    const reply = await a2a("GetExtendedAgentCard", {});
    expect(reply.json.error?.code, reply.text).toBeDefined();
    expect(reply.json).not.toHaveProperty("result");
  });

  it(`[${H}::TestVersionErrors::test_empty_version_treated_as_default_jsonrpc] {VER-SERVER-003} answers a request with an empty A2A-Version (read as 0.3) with a result or a well-formed error`, async () => {
    const reply = await postRpc(
      w.project.id,
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: userMessage("empty version test"), configuration: answerAtOnce } }),
      { credential: w.member.token, headers: { "A2A-Version": "" }, version: null },
    );
    expect(reply.status, reply.text).toBe(200);
    expect("result" in reply.json || "error" in reply.json, reply.text).toBe(true);
    if (reply.json.error) expect(reply.json.error.code).not.toBe(-32603);
  });
});

describe("A2A 1.0 JSON-RPC format (tests/compatibility/core_operations/test_transport_behavior.py)", () => {
  const B = `${C}/core_operations/test_transport_behavior.py`;

  it(`[${B}::TestJsonRpcFormat::test_response_validates_jsonrpc_envelope | ${B}::TestJsonRpcFormat::test_content_type_is_application_json] {JSONRPC-FMT-001, JSONRPC-FMT-002} answers SendMessage as application/json, a JSON-RPC 2.0 response whose result is a SendMessageResponse`, async () => {
    const reply = await a2a("SendMessage", { message: userMessage("Hello from TCK"), configuration: answerAtOnce }, { id: 1 });
    expect(reply.headers.get("Content-Type")).toMatch(/application\/json/);
    expect(reply.json).toMatchObject({ jsonrpc: "2.0", id: 1 });
    expect(schemaErrors("Send Message Response", rpcResult(reply))).toEqual([]);
  });

  it(`[${B}::TestJsonRpcServiceParams::test_extensions_header_accepted] {JSONRPC-SVC-002} takes an A2A-Extensions header naming extensions it does not know without a server error`, async () => {
    const reply = await a2a(
      "SendMessage",
      { message: userMessage("Extensions header test"), configuration: answerAtOnce },
      {
        headers: { "A2A-Extensions": "https://example.com/ext/v1,https://example.com/ext/v2" },
      },
    );
    expect(reply.status, reply.text).toBeLessThan(500);
    expect(STATES_ON_ANSWER).toContain(rpcResult(reply).task.status.state);
  });
});
