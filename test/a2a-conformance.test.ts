/**
 * The mandatory checks of A2A's conformance kit (a2aproject/a2a-tck, tests/mandatory) that apply to a project's front door,
 * a server whose tasks are worked by the project's agents rather than answered by the server itself.
 *
 * How the kit's requests are adapted: every v1.0 request carries `A2A-Version: 1.0` (the kit sends none, which the
 * spec reads as 0.3); the card is the project's, under /a2a/{project}/, and needs a bearer like every other request;
 * messages that create a task the test then drives ask `returnImmediately` (without it the spec has the answer wait
 * for an agent); where the kit waits for its own agent to act, the project's registered agent acts through the hub's
 * ordinary agent API.
 *
 * Ported, file by file (test names in brackets are the kit's):
 * - jsonrpc/test_json_rpc_compliance.py: all four [rejects_malformed_json, rejects_invalid_json_rpc_requests x5,
 *   rejects_unknown_method, rejects_invalid_params].
 * - jsonrpc/test_protocol_violations.py: all four [duplicate_request_ids, invalid_jsonrpc_version, missing_method_field,
 *   raw_invalid_json].
 * - jsonrpc/test_a2a_error_codes.py: push_notification_not_supported_error_32003 (its v0.3 method name, through the
 *   0.3 interface); unsupported_operation_error_32004 with the trigger the spec names for this server (a message to a
 *   finished task; streaming, the kit's trigger, is supported); content_type_not_supported_error_32005 as "never an
 *   internal error"; TaskNotCancelable -32002 from its coverage table.
 * - jsonrpc/test_a2a_error_codes_enhanced.py: push_notification_not_supported_error_32003_enhanced (all four v1.0
 *   config methods); unsupported_operation_error_32004_enhanced (unknown method -32601; odd configuration never an
 *   internal error); content_type_not_supported_error_32005_enhanced (the same).
 * - quality/test_error_validation_enhanced.py: all five [invalid_method, invalid_params, nonexistent_resource,
 *   error_consistency_across_methods, error_response_completeness], the v0.3 method names through the 0.3 interface.
 * - protocol/test_agent_card.py, test_agent_card_mandatory.py: all [available, mandatory fields and types, capabilities,
 *   skills, input/output modes, basic info], on the v1.0 card and on the card served without A2A-Version.
 * - protocol/test_message_send_method.py: message_send_valid_text (the agent works the task while the answer is
 *   awaited), message_send_invalid_params, message_send_continue_task (the follow-up answers the agent's question).
 * - protocol/test_tasks_get_method.py: all three; protocol/test_tasks_cancel_method.py: both.
 * - protocol/test_state_transitions.py: task_history_length (the history built by the agent's questions and the answers).
 * - protocol/test_tasks_list_method.py: every mandatory test (basic listing, filtering, pagination, history, artifacts,
 *   edge cases and errors); tasks are listed in the state the hub gives them (submitted until an agent starts them).
 * - protocol/test_extended_agent_card.py and test_a2a_v030_new_methods.py::extended_agent_card_method_exists: the card
 *   declares no extended card, so GetExtendedAgentCard must be UnsupportedOperation (spec 3.3.4).
 * - protocol/test_a2a_v030_new_methods.py: core_method_mapping_compliance (with the SDK's own client),
 *   jsonrpc_specific_features (a task has id and status).
 * - protocol/test_a2a_v030_transport_compliance.py: transport_specific_features (JSON-RPC streams as server-sent events).
 * - transport/test_multi_transport_equivalence.py: message_sending, task_retrieval (the 1.0 and 0.3 interfaces the card
 *   declares), error_handling, concurrent_operation.
 * - authentication/test_auth_enforcement.py, test_auth_compliance_v030.py: authentication_required_when_declared,
 *   invalid_credentials_rejected, authentication_scheme_consistency, security_scheme_structure_compliance,
 *   authentication_transport_consistency, security_error_response_compliance.
 * - security/test_agent_card_security.py: authentication_scheme_validation (every invalid-credential scenario, on the
 *   JSON-RPC endpoint since there is no extended card), security_scheme_consistency, sensitive_information_protection
 *   (its patterns, less those that match any card: a bare "token", "test...host" against the test host, and "10." in a
 *   version; plus the machine details the hub holds about its agents), public_agent_card_access_control adapted: a
 *   project's card is private to those who may see the project, so it answers 401 without credentials and 404 outside.
 * - security/test_in_task_authentication.py: authentication_challenge_headers, invalid_authentication_handling.
 *
 * Left out:
 * - test_a2a_error_codes.py::invalid_agent_response_error_32006 and the _enhanced twin: only an agent's own bug triggers it.
 * - test_a2a_error_codes.py::a2a_error_code_coverage_summary, _enhanced::a2a_error_code_coverage_enhanced: assert constants.
 * - test_a2a_v030_new_methods.py::tasks_list_with_existing_tasks: optional, and covered by the ListTasks checks.
 * - test_a2a_v030_new_methods.py::transport_specific_method_naming: checks the kit's own client's method table.
 * - test_a2a_v030_new_methods.py::grpc_specific_features, rest_specific_features: gRPC and REST only; the hub speaks JSON-RPC.
 * - test_a2a_v030_transport_compliance.py::transport_compliance_validation, required_method_availability: check the
 *   kit's client object (the SDK client's round trip stands for them); multi_transport_method_mapping,
 *   comprehensive_a2a_v030_compliance: need two transports.
 * - test_multi_transport_equivalence.py::agent_card_access_equivalence, performance_equivalence: need an extended card.
 * - test_agent_card_security.py::extended_card_access_controls: no extended card is declared.
 * - test_auth_compliance_v030.py::oauth2_metadata_url_validation, mutual_tls_scheme_declaration: no such scheme declared.
 * - test_in_task_authentication.py::auth_required_state_support (asserts a constant), in_task_authentication_workflow,
 *   auth_state_transitions: the hub never asks a client for secondary credentials (no auth-required state).
 * - test_tasks_list_method.py::same_results_across_transports: optional, and one transport.
 * - security/test_certificate_validation.py, test_tls_configuration_enhanced.py, test_transport_security.py: TLS and
 *   HTTPS are the edge's (Cloudflare's), not the Worker's; the kit itself skips them off a public HTTPS host.
 */
import { CancelTaskRequest, GetTaskRequest, SendMessageRequest, TaskState, type Task } from "@a2a-js/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { a2aBase, a2aClient } from "./a2a-client";
import { cardUrl, jsonRpc, postRpc, rpcError, rpcResult, rpcStream, type RpcOptions } from "./a2a-wire";
import { accessTokenUntil, addMember, bootstrapAdmin, call, createProject, createUser, registerAgent, until } from "./helpers";
import { workerFetch } from "./mcp-client";
import { T, cli, expectOk, openSession } from "./task-world";

const STATES_ON_ANSWER = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"];
const RESULT = {
  $schema: "orchestratia/task-result/v1",
  summary: "Done",
  contracts: { api_schema: { type: "api_schema", description: "the API", data: { paths: ["/orders"] } } },
};

let w: {
  admin: string;
  member: Awaited<ReturnType<typeof createUser>>;
  outsider: Awaited<ReturnType<typeof createUser>>;
  project: { id: string };
  other: { id: string };
  agent: { id: string; apiKey: string; name: string };
};

beforeAll(async () => {
  const admin = await bootstrapAdmin();
  const member = await createUser(admin, "member");
  const outsider = await createUser(admin, "member");
  const project = await createProject(admin, "A2A conformance");
  const other = await createProject(admin, "Another project");
  await addMember(admin, project.id, member.id);
  const agent = await registerAgent(admin, `tck-agent-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
  await expectOk(
    call("/api/v1/servers/heartbeat", {
      apiKey: agent.apiKey,
      body: { capabilities: { languages: ["typescript"], tools: ["npm"], tags: ["backend"], environments: ["linux"], max_concurrent_tasks: 10 } },
    }),
  );
  await openSession(agent.apiKey, project.id, "worker");
  w = { admin, member, outsider, project, other, agent };
});

// ---- the front door, as the member of the project calls it ----

const a2a = (method: string, params: unknown, options: Partial<RpcOptions> & { id?: string | number | null } = {}) =>
  jsonRpc(w.project.id, method, params, { credential: w.member.token, ...options });
const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra });
const answerAtOnce = { returnImmediately: true };

/** A task made of this text, answered as soon as it exists (the project's agent works it later, if at all). */
async function newTask(text: string, extra: Record<string, unknown> = {}) {
  const result = rpcResult(await a2a("SendMessage", { message: userMessage(text, extra), configuration: answerAtOnce }));
  expect(result.task, JSON.stringify(result)).toBeDefined();
  return result.task;
}
const getTask = async (id: string, extra: Record<string, unknown> = {}) => rpcResult(await a2a("GetTask", { id, ...extra }));
const listTasks = async (params: Record<string, unknown>) => rpcResult(await a2a("ListTasks", params));
const uniqueContext = (what: string) => `${what}-${crypto.randomUUID()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the project's agent, working tasks through the hub's ordinary agent API ----

const hubTask = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: w.admin }))).json;

/** The agent takes the task up: assigned to it if the front door left it pending, then started. */
async function takeUp(id: string) {
  if ((await hubTask(id)).status === "pending") {
    const assigned = await call(`/api/v1/tasks/${id}/assign`, { token: w.admin, body: { server_name: w.agent.name } });
    expect([200, 409], assigned.text).toContain(assigned.status);
  }
  expect(await hubTask(id)).toMatchObject({ status: "assigned", assigned_server_id: w.agent.id });
  await expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/start`));
}
const complete = (id: string) => expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/complete`, { result: RESULT }));
const ask = (id: string, question: string) => expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/help`, { question, intervention_type: "question" }));

let finished: Promise<{ id: string; contextId: string }> | undefined;
/** One task the agent has completed with a contract (so with an artifact), in a context of its own. */
const finishedTask = () =>
  (finished ??= (async () => {
    const task = await newTask("Write the order API", { contextId: uniqueContext("finished") });
    await takeUp(task.id);
    await complete(task.id);
    return task;
  })());

let questioned: Promise<{ id: string; contextId: string }> | undefined;
/** One task with a history: the message that made it, then three questions of the agent, each answered by a follow-up. */
const taskWithHistory = () =>
  (questioned ??= (async () => {
    const task = await newTask("Initial message for history test", { contextId: uniqueContext("history") });
    await takeUp(task.id);
    for (const i of [1, 2, 3]) {
      await ask(task.id, `Question ${i}?`);
      expect((await getTask(task.id)).status.state).toBe("TASK_STATE_INPUT_REQUIRED");
      rpcResult(
        await a2a("SendMessage", { message: userMessage(`Follow-up message ${i} for history test`, { taskId: task.id }), configuration: answerAtOnce }),
      );
    }
    return task;
  })());

describe("the agent card (protocol/test_agent_card.py, test_agent_card_mandatory.py)", () => {
  const fetchCard = async (headers: Record<string, string>) => {
    const res = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, ...headers } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    return res.json() as Promise<any>;
  };
  const cards = [
    ["the v1.0 card", { "A2A-Version": "1.0" }],
    ["the card served without A2A-Version", {}],
  ] as const;

  it.each(cards)("%s is a JSON object with every required field, of the required types and not empty", async (_, headers) => {
    const card = await fetchCard(headers);
    expect(card).toBeTypeOf("object");
    for (const field of ["name", "description", "version"]) {
      expect(card[field], field).toBeTypeOf("string");
      expect(card[field].trim(), field).not.toBe("");
    }
    expect(card.capabilities).toBeTypeOf("object");
    expect(card.capabilities).not.toBeNull();
    expect(Array.isArray(card.supportedInterfaces)).toBe(true);
  });

  it.each(cards)("%s declares at least one skill, each with an id, a name, a description and tags", async (_, headers) => {
    const card = await fetchCard(headers);
    expect(Array.isArray(card.skills)).toBe(true);
    expect(card.skills.length).toBeGreaterThan(0);
    for (const skill of card.skills) {
      for (const field of ["id", "name", "description"]) expect(skill[field], JSON.stringify(skill)).toBeTypeOf("string");
      expect(Array.isArray(skill.tags), JSON.stringify(skill)).toBe(true);
    }
  });

  it.each(cards)("%s declares its default input and output modes as non-empty strings", async (_, headers) => {
    const card = await fetchCard(headers);
    for (const field of ["defaultInputModes", "defaultOutputModes"]) {
      expect(Array.isArray(card[field]), field).toBe(true);
      for (const mode of card[field]) {
        expect(mode).toBeTypeOf("string");
        expect(mode.trim()).not.toBe("");
      }
    }
  });

  it("is found by the SDK's card resolver, whose client then speaks 1.0 to the JSON-RPC interface at /a2a/{project}/", async () => {
    const client = await a2aClient(w.project.id, w.member.token);
    expect(client.protocolVersion).toBe("1.0");
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: a2aBase(w.project.id), protocolBinding: "JSONRPC", protocolVersion: "1.0" }),
    );
  });
});

describe("authentication (authentication/*, security/test_agent_card_security.py, security/test_in_task_authentication.py)", () => {
  const v1Card = async () => {
    const res = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } });
    expect(res.status).toBe(200);
    return res.json() as Promise<any>;
  };
  const getTaskWith = (headers: Record<string, string>) =>
    postRpc(w.project.id, JSON.stringify({ jsonrpc: "2.0", id: "auth-1", method: "GetTask", params: { id: `test-task-${crypto.randomUUID()}` } }), {
      credential: null,
      headers,
    });

  it("declares a well-formed HTTP bearer scheme, and its security requirements name only declared schemes", async () => {
    const card = await v1Card();
    const schemes = Object.entries(card.securitySchemes ?? {});
    expect(schemes.length).toBeGreaterThan(0);
    for (const [name, scheme] of schemes as [string, Record<string, any>][]) {
      expect(Object.keys(scheme), name).toHaveLength(1);
      expect(["apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme"]).toContain(
        Object.keys(scheme)[0],
      );
    }
    const bearer = schemes.map(([, s]) => (s as any).httpAuthSecurityScheme).find(Boolean);
    expect(bearer?.scheme?.toLowerCase()).toBe("bearer");
    const required = [...(card.securityRequirements ?? []), ...(card.security ?? [])].flatMap((r: any) => Object.keys(r.schemes ?? r));
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) expect(Object.keys(card.securitySchemes)).toContain(name);
  });

  it("refuses a JSON-RPC request without credentials with 401, a problem and a bearer challenge, before any JSON-RPC is answered", async () => {
    const reply = await getTaskWith({});
    expect(reply.status, reply.text).toBe(401);
    expect(reply.headers.get("Content-Type")).toBe("application/problem+json");
    expect(reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer\b/);
    expect(reply.json).not.toHaveProperty("jsonrpc");
  });

  it("refuses every invalid credential the kit tries, and an expired JWT, with 401", async () => {
    const expired = await accessTokenUntil(w.member.id, Math.floor(Date.now() / 1000) - 60);
    const scenarios = [
      "Bearer invalid-dummy-jwt-token-12345",
      "Bearer expired.token.signature",
      "Malformed auth header",
      "InvalidType invalid-token-0",
      "Basic aW52YWxpZDppbnZhbGlk",
      `Bearer orc_${crypto.randomUUID().replaceAll("-", "")}`,
      `Bearer ${expired}`,
    ];
    for (const authorization of scenarios) {
      const reply = await getTaskWith({ Authorization: authorization });
      expect(reply.status, `${authorization}: ${reply.text}`).toBe(401);
      expect(reply.json, authorization).not.toHaveProperty("jsonrpc");
    }
  });

  it("takes an agent's API key as the bearer as well as a person's JWT", async () => {
    const asAgent = await jsonRpc(w.project.id, "ListTasks", {}, { credential: w.agent.apiKey });
    expect(rpcResult(asAgent).tasks).toBeInstanceOf(Array);
    const card = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.agent.apiKey}` } });
    expect(card.status).toBe(200);
  });

  it("keeps a project's card private: 401 without credentials, 404 to a person outside the project or for a project that does not exist", async () => {
    const anonymous = await workerFetch(cardUrl(w.project.id));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("Content-Type")).toBe("application/problem+json");
    const invalid = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: "Bearer invalid-extended-card-token-12345" } });
    expect(invalid.status).toBe(401);
    const outside = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.outsider.token}` } });
    const nowhere = await workerFetch(cardUrl(crypto.randomUUID()), { headers: { Authorization: `Bearer ${w.outsider.token}` } });
    expect([outside.status, nowhere.status]).toEqual([404, 404]);
    expect(await outside.text()).not.toContain("A2A conformance");
    const outsideRpc = await jsonRpc(w.project.id, "ListTasks", {}, { credential: w.outsider.token });
    expect(outsideRpc.status, outsideRpc.text).toBe(404);
  });

  it("exposes no secret, credential or detail of the agents' machines in the card", async () => {
    const text = JSON.stringify(await v1Card()).toLowerCase();
    const patterns = [
      /(api[_-]?key|secret|password|credential)/,
      /(private[_-]?key|secret[_-]?key)/,
      /(access[_-]?token|bearer[_-]?token)/,
      /(client[_-]?secret|app[_-]?secret)/,
      /\b(127\.0\.0\.1|192\.168\.\d+\.\d+|10\.\d+\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+)\b/,
      /(database|db)[_-]?(url|host|connection)/,
      /(redis|mongo|sql)[_-]?(url|host|connection)/,
    ];
    for (const pattern of patterns) expect(text).not.toMatch(pattern);
    const card = await v1Card();
    for (const field of ["adminUrl", "internalUrl", "debugEndpoint", "privateConfig", "secrets", "credentials"]) expect(card).not.toHaveProperty(field);
    // What the hub knows of the agent's machine (test/helpers.ts daemonRegistration) stays out of it.
    for (const detail of [
      w.member.token,
      w.agent.apiKey,
      `${w.agent.name}.internal`,
      "/home/dev/api-gateway",
      "0123456789abcdef0123456789abcdef",
      "aa:bb:cc:dd:ee:ff",
    ]) {
      expect(text).not.toContain(detail.toLowerCase());
    }
  });
});

describe("JSON-RPC 2.0 (jsonrpc/test_json_rpc_compliance.py, test_protocol_violations.py)", () => {
  const post = (body: string) => postRpc(w.project.id, body, { credential: w.member.token });

  it("answers malformed JSON with a parse error, -32700, and a null id", async () => {
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
    ["a jsonrpc other than 2.0", -32600, { jsonrpc: "aaa", method: "SendMessage", params: {} }],
    ["jsonrpc 1.0", -32600, { jsonrpc: "1.0", id: "v1", method: "SendMessage", params: { message: userMessage("Hello from protocol violation test!") } }],
    ["no method", -32600, { jsonrpc: "2.0", params: {} }],
    ["no method, with an id", -32600, { jsonrpc: "2.0", id: "no-method", params: { message: userMessage("Hello from protocol violation test!") } }],
    ["an unknown method", -32601, { jsonrpc: "2.0", method: "SendMessageXXX", id: "3", params: {} }],
    ["an id that is an object", -32600, { jsonrpc: "2.0", method: "SendMessage", params: {}, id: { bad: "type" } }],
    ["a params member with an empty name", -32602, { jsonrpc: "2.0", method: "SendMessage", id: "4", params: { "": "not_a_dict" } }],
  ])("answers a request with %s with %i, in an HTTP 200", async (_, code, request) => {
    const reply = await post(JSON.stringify(request));
    rpcError(reply, code);
    // The id is echoed when the request carried a valid one, and null otherwise (JSON-RPC 2.0, section 5).
    const sent = (request as { id?: unknown }).id;
    expect(reply.json.id).toBe(typeof sent === "string" ? sent : null);
  });

  it("answers an unknown method with -32601, echoing the request's id", async () => {
    const reply = await a2a("nonexistent/method", {}, { id: "unknown-method-1" });
    rpcError(reply, -32601);
    expect(reply.json.id).toBe("unknown-method-1");
  });

  it("answers a SendMessage whose parts are not a list with invalid params, -32602", async () => {
    rpcError(await a2a("SendMessage", { message: { parts: "invalid" } }), -32602);
  });

  it("answers two requests with the same id each as a JSON-RPC response carrying that id", async () => {
    const id = `duplicate-${crypto.randomUUID()}`;
    const first = await a2a("SendMessage", { message: userMessage("Hello from protocol violation test!"), configuration: answerAtOnce }, { id });
    expect(rpcResult(first).task.id).toBeTypeOf("string");
    expect(first.json.id).toBe(id);
    const second = await a2a("SendMessage", { message: userMessage("This is a different message with the same ID"), configuration: answerAtOnce }, { id });
    expect(second.json).toMatchObject({ jsonrpc: "2.0", id });
  });
});

describe("A2A error codes (jsonrpc/test_a2a_error_codes*.py, quality/test_error_validation_enhanced.py)", () => {
  const pushMessageWords = (message: string) => {
    for (const word of ["push", "notification", "not", "supported"]) expect(message.toLowerCase()).toContain(word);
  };

  it("answers every push notification config method with PushNotificationNotSupported, -32003, as the card declares none", async () => {
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

  it("answers the 0.3 method tasks/pushNotificationConfig/set, sent without A2A-Version, with -32003 too", async () => {
    const task = await newTask("Test message for push notification error test");
    const reply = await a2a(
      "tasks/pushNotificationConfig/set",
      { taskId: task.id, pushNotificationConfig: { url: "https://example.com/webhook", token: "test-token" } },
      { version: null },
    );
    pushMessageWords(rpcError(reply, -32003).message);
  });

  it("refuses a message to a task that has finished with UnsupportedOperation, -32004, and leaves the task as it was", async () => {
    const task = await finishedTask();
    const before = await hubTask(task.id);
    rpcError(await a2a("SendMessage", { message: userMessage("One more thing", { taskId: task.id }), configuration: answerAtOnce }), -32004);
    expect(await hubTask(task.id)).toMatchObject({ status: "done", updated_at: before.updated_at });
  });

  it("answers an operation it does not know with method not found, -32601, not -32004", async () => {
    rpcError(await a2a("agent/customUnsupportedOperation", { testParameter: "value" }), -32601);
  });

  it("takes a file of an unknown media type, odd output modes and unknown configuration without an internal error", async () => {
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
    ["an unknown 1.0 method", -32601, "invalid/nonexistent/method", {}, {}],
    ["an unknown method without A2A-Version", -32601, "completely/invalid/method", {}, { version: null }],
    ["GetTask without an id", -32602, "GetTask", {}, {}],
    ["tasks/get without an id", -32602, "tasks/get", {}, { version: null }],
    ["GetTask of a task that does not exist", -32001, "GetTask", { id: "definitely-nonexistent-task-id-12345" }, {}],
    ["tasks/get of a task that does not exist", -32001, "tasks/get", { id: "definitely-nonexistent-task-id-12345" }, { version: null }],
  ] as [string, number, string, unknown, Partial<RpcOptions>][])(
    "answers %s with a complete JSON-RPC 2.0 error: version, the request's id, the code %i and a message",
    async (_, code, method, params, options) => {
      const id = crypto.randomUUID();
      const reply = await a2a(method, params, { ...options, id });
      rpcError(reply, code);
      expect(reply.json.id).toBe(id);
    },
  );

  it("answers malformed task ids with an error, never a task, whatever the method", async () => {
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

  it("answers a cancel of a task that has finished with TaskNotCancelable, -32002", async () => {
    const task = await finishedTask();
    rpcError(await a2a("CancelTask", { id: task.id }), -32002);
    expect((await hubTask(task.id)).status).toBe("done");
  });
});

describe("SendMessage (protocol/test_message_send_method.py)", () => {
  it("answers a text message with the task it became, in a state the kit allows, while the project's agent works it", async () => {
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

  it("answers a message without messageId, role or parts with invalid params, -32602, and creates no task", async () => {
    const before = (await listTasks({})).totalSize;
    rpcError(await a2a("SendMessage", { message: { kind: "message" } }), -32602);
    expect((await listTasks({})).totalSize).toBe(before);
  });

  it("continues a task waiting for input: a follow-up naming it answers the agent's question and returns the same task", async () => {
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

describe("GetTask (protocol/test_tasks_get_method.py, test_state_transitions.py)", () => {
  it("returns a task by its id, with its status", async () => {
    const task = await newTask("Task for get test");
    const got = await getTask(task.id);
    expect(got).toMatchObject({ id: task.id, contextId: task.contextId, status: { state: "TASK_STATE_SUBMITTED" } });
  });

  it("returns the task's history when historyLength is given", async () => {
    const task = await newTask("Task for get test");
    const got = await getTask(task.id, { historyLength: 1 });
    expect(got.id).toBe(task.id);
    expect(got.history).toHaveLength(1);
  });

  it("limits the history to the historyLength most recent messages", async () => {
    const task = await taskWithHistory();
    const full = (await getTask(task.id)).history ?? [];
    const limited = (await getTask(task.id, { historyLength: 2 })).history ?? [];
    expect(full.length).toBeGreaterThan(2);
    expect(limited).toHaveLength(2);
    expect(limited).toEqual(full.slice(-2));
  });

  it("answers a task that does not exist, and a task of another project, alike with TaskNotFound, -32001", async () => {
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

describe("CancelTask (protocol/test_tasks_cancel_method.py)", () => {
  it("cancels a task and returns it canceled, as the hub's own task", async () => {
    const task = await newTask("Task for cancel test");
    const canceled = rpcResult(await a2a("CancelTask", { id: task.id }));
    expect(canceled).toMatchObject({ id: task.id, status: { state: "TASK_STATE_CANCELED" } });
    expect((await hubTask(task.id)).status).toBe("cancelled");
  });

  it("answers a task that does not exist with TaskNotFound, -32001", async () => {
    rpcError(await a2a("CancelTask", { id: "nonexistent-task-id" }), -32001);
  });
});

describe("ListTasks (protocol/test_tasks_list_method.py)", () => {
  describe("basic listing", () => {
    it("lists the project's tasks with tasks, totalSize, pageSize and nextPageToken", async () => {
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

    it("answers an empty page for a context with no tasks: no tasks, totalSize 0, pageSize 0, nextPageToken empty", async () => {
      expect(await listTasks({ contextId: uniqueContext("empty-test") })).toEqual({ tasks: [], totalSize: 0, pageSize: 0, nextPageToken: "" });
    });

    it("gives every listed task an id and a status with a state", async () => {
      await newTask("Task for field validation");
      const result = await listTasks({});
      expect(result.tasks.length).toBeGreaterThan(0);
      for (const task of result.tasks) {
        expect(task.id).toBeTypeOf("string");
        expect(task.status.state).toBeTypeOf("string");
      }
    });

    it("sorts tasks by their status timestamp, most recent first", async () => {
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
    it("filters by contextId", async () => {
      const [one, two] = [uniqueContext("context-1"), uniqueContext("context-2")];
      const inOne = await newTask("Task in context 1", { contextId: one });
      const inTwo = await newTask("Task in context 2", { contextId: two });
      const result = await listTasks({ contextId: one });
      expect(result.tasks.map((t: { id: string }) => t.id)).toEqual([inOne.id]);
      expect(result.tasks.map((t: { id: string }) => t.id)).not.toContain(inTwo.id);
      expect(result.tasks.every((t: { contextId: string }) => t.contextId === one)).toBe(true);
    });

    it("filters by status, returning only tasks in that state", async () => {
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

    it("filters by statusTimestampAfter, leaving out tasks whose status is older", async () => {
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

    it("applies contextId and status together", async () => {
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

    it("returns at most 50 tasks when no pageSize is given, and a pageSize equal to the tasks returned", async () => {
      const result = await listTasks({});
      expect(result.pageSize).toBe(Math.min(50, result.totalSize));
      expect(result.tasks).toHaveLength(result.pageSize);
    });

    it("returns pageSize tasks and a nextPageToken when there are more", async () => {
      const result = await listTasks({ contextId, pageSize: 2 });
      expect(result.pageSize).toBe(2);
      expect(result.tasks).toHaveLength(2);
      expect(result.nextPageToken).toBeTypeOf("string");
      expect(result.nextPageToken).not.toBe("");
    });

    it("walks every page with pageToken, no task twice, until an empty nextPageToken", async () => {
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

    it("says the last page is the last with an empty nextPageToken", async () => {
      const contextId = uniqueContext("last-page-test");
      for (const i of [0, 1, 2]) await newTask(`Task ${i} for last page test`, { contextId });
      expect(await listTasks({ contextId, pageSize: 10 })).toMatchObject({ totalSize: 3, pageSize: 3, nextPageToken: "" });
    });

    it("counts every matching task in totalSize, not only the page's", async () => {
      expect(await listTasks({ contextId, pageSize: 2 })).toMatchObject({ totalSize: 5, pageSize: 2, nextPageToken: expect.stringMatching(/.+/) });
    });

    it("defaults pageSize to 50", async () => {
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

    it("leaves history out with historyLength 0", async () => {
      const listed = await inHistoryContext(0);
      expect(listed.history ?? []).toEqual([]);
    });

    it("returns at most historyLength messages of history", async () => {
      const listed = await inHistoryContext(3);
      expect((listed.history ?? []).length).toBeLessThanOrEqual(3);
    });

    it("returns all the history there is when historyLength exceeds it", async () => {
      const task = await taskWithHistory();
      const full = (await getTask(task.id)).history;
      expect((await inHistoryContext(100)).history).toEqual(full);
    });
  });

  describe("artifacts", () => {
    it("leaves artifacts out unless asked", async () => {
      const task = await finishedTask();
      const listed = (await listTasks({ contextId: task.contextId })).tasks;
      expect(listed.map((t: { id: string }) => t.id)).toEqual([task.id]);
      // The kit takes an empty list as well as none.
      for (const t of listed) expect(t.artifacts ?? []).toEqual([]);
    });

    it("includes the artifacts with includeArtifacts", async () => {
      const task = await finishedTask();
      const got = await getTask(task.id);
      expect(got.artifacts?.length).toBeGreaterThan(0);
      const listed = (await listTasks({ contextId: task.contextId, includeArtifacts: true })).tasks;
      expect(listed[0].artifacts).toEqual(got.artifacts);
    });
  });

  describe("edge cases and errors", () => {
    it.each([
      ["an invalid pageToken", { pageToken: "invalid-token-xyz" }],
      ["an invalid status", { status: "INVALID_STATUS" }],
      ["a negative pageSize", { pageSize: -1 }],
      ["a pageSize of 0", { pageSize: 0 }],
      ["a pageSize over 100", { pageSize: 101 }],
      ["a negative historyLength", { historyLength: -1 }],
      ["an invalid statusTimestampAfter", { statusTimestampAfter: "-1" }],
    ])("answers %s with invalid params, -32602", async (_, params) => {
      rpcError(await a2a("ListTasks", params), -32602);
    });
  });
});

describe("extended agent card (protocol/test_extended_agent_card.py, test_a2a_v030_new_methods.py)", () => {
  it("is not declared, and GetExtendedAgentCard answers UnsupportedOperation, -32004", async () => {
    const card: any = await (await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } })).json();
    expect(card.capabilities.extendedAgentCard ?? false).toBe(false);
    rpcError(await postRpc(w.project.id, JSON.stringify({ jsonrpc: "2.0", id: 6, method: "GetExtendedAgentCard" }), { credential: w.member.token }), -32004);
  });
});

describe("methods and transport (test_a2a_v030_new_methods.py, test_a2a_v030_transport_compliance.py, transport/test_multi_transport_equivalence.py)", () => {
  it("sends, gets and cancels a task through the SDK's own client, the task always carrying id and status", async () => {
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

  it("streams SendStreamingMessage as server-sent events, each a JSON-RPC response with the request's id, from the task to its end", async () => {
    const stream = await rpcStream(w.project.id, "SendStreamingMessage", { message: userMessage("Stream this") }, { credential: w.member.token });
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const events: any[] = [];
    const first = await stream.events.next();
    expect(first.done).toBe(false);
    events.push(first.value!.data);
    const taskId = events[0].result.task.id;
    expect(events[0]).toMatchObject({ jsonrpc: "2.0", id: stream.id, result: { task: { id: taskId, status: { state: "TASK_STATE_SUBMITTED" } } } });
    rpcResult(await a2a("CancelTask", { id: taskId }));
    const ended = (async () => {
      for await (const event of stream.events) events.push(event.data);
    })();
    await Promise.race([ended, sleep(10_000).then(() => Promise.reject(new Error(`the stream did not end: ${JSON.stringify(events)}`)))]);
    for (const event of events) expect(event).toMatchObject({ jsonrpc: "2.0", id: stream.id });
    expect(events.at(-1).result.statusUpdate).toMatchObject({ taskId, status: { state: "TASK_STATE_CANCELED" } });
  });

  it("reads the same task alike through the 1.0 interface and the 0.3 one the card also declares", async () => {
    const task = await newTask("Test message for transport equivalence validation");
    const current = await getTask(task.id);
    const legacy = rpcResult(await a2a("tasks/get", { id: task.id }, { version: null }));
    expect(legacy).toMatchObject({ kind: "task", id: current.id, contextId: current.contextId, status: { state: "submitted" } });
    rpcError(await a2a("tasks/get", { id: "invalid-nonexistent-task-id-12345" }, { version: null }), -32001);
    rpcError(await a2a("GetTask", { id: "invalid-nonexistent-task-id-12345" }), -32001);
  });

  it("makes concurrent messages into distinct tasks", async () => {
    const tasks = await Promise.all([1, 2, 3].map((i) => newTask(`Concurrent test message ${i} via HTTP/JSON-RPC`)));
    expect(new Set(tasks.map((t) => t.id)).size).toBe(3);
  });
});
