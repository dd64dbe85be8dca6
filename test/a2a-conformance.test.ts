/**
 * A2A's conformance kit (github.com/a2aproject/a2a-tck), ported as vitest tests of a project's front door: a server
 * whose tasks are worked by the project's agents rather than answered by the server itself. Two trees of the kit:
 * - main at 410ba92e1b26 (2026-03-13, spec 1.0.0 RC): tests/mandatory, the tests it marks mandatory;
 * - 1.0-dev at 357c4a87afa2 (2026-05-05, spec v1.0.0 at A2A 173695755607): the kit rebuilt for 1.0 as tests/compatibility,
 *   each test recording requirement ids of its tck/requirements (CORE-SEND-002, JSONRPC-ERR-003, ...); its @must tests.
 *
 * Each test's name (`title` in vitest's JSON report) starts with the kit's tests it ports, for a generated table:
 *   [<kit test>( | <kit test>)*] {<requirement id>(, <requirement id>)*} <what the hub does>
 * <kit test> is pytest's node id: <path from the kit's root>::[<Class>::]<test>[<parameter id>], without spaces; the
 * braces name the requirement ids tests/compatibility records. One it.each row is one test. A reader's regex:
 *   ^\[(\S+(?: \| \S+)*)\](?: \{([^}]*)\})? (.*)$   (kit tests split on " | ", ids on ", ")
 *
 * How the kit's requests are adapted: every v1.0 request carries `A2A-Version: 1.0` (tests/mandatory sends none, which
 * the spec reads as 0.3); the card is the project's, under /a2a/{project}/, and needs a bearer like every other request;
 * messages that create a task the test then drives ask `returnImmediately` (without it the spec has the answer wait
 * for an agent); where the kit waits for its own agent (its SUT's scripted scenarios) to act, the project's registered
 * agent acts through the hub's ordinary agent API (test/a2a-tck-world.ts); only the JSON-RPC binding is declared, so
 * the kit's `-jsonrpc` parameters are the ones ported. Schemas are the kit's (test/a2a-tck-schema.ts).
 * Files: this one (card, authentication), -jsonrpc (JSON-RPC and errors), -tasks and -list (tests/mandatory's
 * messages, tasks, ListTasks), -lifecycle (tests/compatibility's messages, tasks, data model), -streams (streaming).
 *
 * tests/mandatory, file by file (the kit's test names in brackets, less `test_`):
 * - jsonrpc/test_json_rpc_compliance.py, test_protocol_violations.py: all.
 * - jsonrpc/test_a2a_error_codes.py: push_notification_not_supported_error_32003 (its v0.3 method, through the 0.3
 *   interface); unsupported_operation_error_32004 with the trigger the spec names for this server (a message to a
 *   finished task; streaming, the kit's trigger, is supported); content_type_not_supported_error_32005 as "never an
 *   internal error". _enhanced: the same three, the push methods all four of v1.0's.
 * - quality/test_error_validation_enhanced.py: all five, the v0.3 method names through the 0.3 interface.
 * - protocol/test_agent_card.py, test_agent_card_mandatory.py: all, on the v1.0 card and on the card without A2A-Version.
 * - protocol/test_message_send_method.py, test_tasks_get_method.py, test_tasks_cancel_method.py,
 *   test_state_transitions.py, test_tasks_list_method.py (its mandatory tests): all; ListTasks lists tasks in the state
 *   the hub gives them (submitted until an agent starts them).
 * - protocol/test_extended_agent_card.py, test_a2a_v030_new_methods.py::extended_agent_card_method_exists: no extended
 *   card is declared, so GetExtendedAgentCard is UnsupportedOperation (spec 3.3.4).
 * - protocol/test_a2a_v030_new_methods.py: core_method_mapping_compliance (with the SDK's client), jsonrpc_specific_features.
 * - protocol/test_a2a_v030_transport_compliance.py: transport_specific_features (JSON-RPC streams as server-sent events).
 * - transport/test_multi_transport_equivalence.py: message_sending, task_retrieval (the 1.0 and 0.3 interfaces),
 *   error_handling, concurrent_operation.
 * - authentication/test_auth_enforcement.py, test_auth_compliance_v030.py: all but those named below.
 * - security/test_agent_card_security.py: authentication_scheme_validation (on the JSON-RPC endpoint, there being no
 *   extended card), security_scheme_consistency, sensitive_information_protection (its patterns less those that match
 *   any card: a bare "token", "test...host" against the test host, "10." in a version; plus the agents' machine details),
 *   public_agent_card_access_control adapted: a project's card is private (401 without credentials, 404 outside).
 * - security/test_in_task_authentication.py: authentication_challenge_headers, invalid_authentication_handling.
 * Not ported: error_codes*::invalid_agent_response_error_32006* (only an agent's own bug triggers it);
 * a2a_error_code_coverage_summary and _enhanced (assert constants); v030_new_methods::tasks_list_with_existing_tasks
 * (optional), transport_specific_method_naming (the kit's own table), grpc_ and rest_specific_features (other bindings);
 * v030_transport_compliance::transport_compliance_validation, required_method_availability (the kit's client object),
 * multi_transport_method_mapping, comprehensive_a2a_v030_compliance (two transports); multi_transport_equivalence::
 * agent_card_access_equivalence, performance_equivalence and agent_card_security::extended_card_access_controls (an
 * extended card); auth_compliance_v030::oauth2_metadata_url_validation, mutual_tls_scheme_declaration (no such scheme);
 * in_task_authentication::auth_required_state_support, in_task_authentication_workflow, auth_state_transitions (no
 * auth-required state); tasks_list::same_results_across_transports (optional); security/test_certificate_validation.py,
 * test_tls_configuration_enhanced.py, test_transport_security.py (TLS is the edge's, Cloudflare's; the kit skips them
 * off a public HTTPS host).
 *
 * tests/compatibility (1.0-dev), file by file, its @must tests (SHOULD and MAY ones are not ported):
 * - agent_card/test_agent_card.py: all six, on the v1.0 card.
 * - core_operations/test_error_handling.py: the _jsonrpc tests and TestJsonRpcErrorStructure. Not: the _rest and gRPC
 *   ones (other bindings), TestCapabilityStreaming (streaming is declared), TestCapabilityExtensionRequired (no
 *   extension is declared required): the kit skips these here.
 * - core_operations/test_transport_behavior.py: TestJsonRpcFormat, TestJsonRpcServiceParams, TestJsonRpcStreaming.
 *   Not: TestJsonRpcMethodNames (checks the kit's own method table), the REST and gRPC classes.
 * - jsonrpc/test_error_codes.py, test_error_info.py, test_sse_streaming.py: all; test_unsupported_operation_error with
 *   the trigger above (the kit's, streaming, is supported).
 * - core_operations/test_requirements.py::test_must_requirement: every -jsonrpc parameter the kit runs here; not
 *   CARD-EXT-001/002 (no extended card: skipped by the kit) and the grpc and http_json parameters. CORE-SEND-003 is held
 *   to its requirement (an unsupported media type is ContentTypeNotSupportedError), which the kit's runner, expecting
 *   no error there, contradicts.
 * - core_operations/test_task_lifecycle.py, test_multi_stream.py, test_stream_ordering.py, test_data_model.py: all.
 * - core_operations/test_task_history.py: TestHistoryLengthLimit (the file's one MUST).
 * - core_operations/test_artifacts.py: TestTextArtifact, TestDataArtifact (the agent's result holds a string contract
 *   and an object one). Not: TestFileArtifact, TestFileUrlArtifact (a hub result holds no files), TestMessageResponse
 *   (the hub answers every message with a task, which the spec allows).
 * - core_operations/test_push_notifications.py: none; push notifications are not declared, so the kit skips it.
 * - grpc/*, http_json/*: none; the hub declares neither binding.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { a2aBase, a2aClient } from "./a2a-client";
import { schemaErrors } from "./a2a-tck-schema";
import { tckWorld, w } from "./a2a-tck-world";
import { cardUrl, jsonRpc, postRpc, rpcResult } from "./a2a-wire";
import { accessTokenUntil } from "./helpers";
import { workerFetch } from "./mcp-client";

tckWorld();

const M = "tests/mandatory";
const C = "tests/compatibility";

describe("the agent card", () => {
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

  it.each(cards)(
    `[${M}/protocol/test_agent_card.py::test_agent_card_available | ${M}/protocol/test_agent_card.py::test_mandatory_fields_present | ${M}/protocol/test_agent_card.py::test_mandatory_field_types | ${M}/protocol/test_agent_card_mandatory.py::test_agent_card_mandatory_fields | ${M}/protocol/test_agent_card_mandatory.py::test_agent_card_capabilities_mandatory | ${M}/protocol/test_agent_card_mandatory.py::test_agent_card_basic_info_mandatory] %s is a JSON object with every required field, of the required types and not empty`,
    async (_, headers) => {
      const card = await fetchCard(headers);
      expect(card).toBeTypeOf("object");
      for (const field of ["name", "description", "version"]) {
        expect(card[field], field).toBeTypeOf("string");
        expect(card[field].trim(), field).not.toBe("");
      }
      expect(card.capabilities).toBeTypeOf("object");
      expect(card.capabilities).not.toBeNull();
      expect(Array.isArray(card.supportedInterfaces)).toBe(true);
    },
  );

  it.each(cards)(
    `[${M}/protocol/test_agent_card_mandatory.py::test_agent_card_skills_mandatory] %s declares at least one skill, each with an id, a name, a description and tags`,
    async (_, headers) => {
      const card = await fetchCard(headers);
      expect(Array.isArray(card.skills)).toBe(true);
      expect(card.skills.length).toBeGreaterThan(0);
      for (const skill of card.skills) {
        for (const field of ["id", "name", "description"]) expect(skill[field], JSON.stringify(skill)).toBeTypeOf("string");
        expect(Array.isArray(skill.tags), JSON.stringify(skill)).toBe(true);
      }
    },
  );

  it.each(cards)(
    `[${M}/protocol/test_agent_card_mandatory.py::test_agent_card_input_output_modes_mandatory] %s declares its default input and output modes as non-empty strings`,
    async (_, headers) => {
      const card = await fetchCard(headers);
      for (const field of ["defaultInputModes", "defaultOutputModes"]) {
        expect(Array.isArray(card[field]), field).toBe(true);
        for (const mode of card[field]) {
          expect(mode).toBeTypeOf("string");
          expect(mode.trim()).not.toBe("");
        }
      }
    },
  );

  it(`[${C}/agent_card/test_agent_card.py::TestAgentCardDiscovery::test_agent_card_retrievable] {CARD-DISC-001} is found by the SDK's card resolver, whose client then speaks 1.0 to the JSON-RPC interface at /a2a/{project}/`, async () => {
    const client = await a2aClient(w.project.id, w.member.token);
    expect(client.protocolVersion).toBe("1.0");
    const card = await client.getAgentCard();
    expect(card.supportedInterfaces).toContainEqual(
      expect.objectContaining({ url: a2aBase(w.project.id), protocolBinding: "JSONRPC", protocolVersion: "1.0" }),
    );
  });
});

describe("the agent card, as tests/compatibility reads it (with A2A-Version: 1.0)", () => {
  const T = `${C}/agent_card/test_agent_card.py`;
  let card: any;
  beforeAll(async () => {
    const res = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.member.token}`, "A2A-Version": "1.0" } });
    expect(res.status).toBe(200);
    card = await res.json();
  });

  it(`[${T}::TestAgentCardStructure::test_agent_card_validates_against_schema] {CARD-STRUCT-001} conforms to the kit's schema of AgentCard`, () => {
    expect(schemaErrors("Agent Card", card)).toEqual([]);
  });

  it(`[${T}::TestAgentCardStructure::test_required_fields_present] {CARD-STRUCT-001} has every field the proto marks required`, () => {
    for (const field of ["name", "description", "version", "capabilities", "skills", "supportedInterfaces", "defaultInputModes", "defaultOutputModes"])
      expect(card, field).toHaveProperty(field);
  });

  it(`[${T}::TestAgentCardProtocol::test_supported_interfaces_non_empty] {CARD-PROTO-001} declares at least one interface`, () => {
    expect(Array.isArray(card.supportedInterfaces)).toBe(true);
    expect(card.supportedInterfaces.length).toBeGreaterThan(0);
  });

  it(`[${T}::TestAgentCardProtocol::test_each_interface_validates_against_schema] {CARD-PROTO-002} declares each interface with its binding and URL, as the schema has it`, () => {
    for (const [i, iface] of card.supportedInterfaces.entries()) {
      expect(schemaErrors("Agent Interface", iface), `interface ${i}`).toEqual([]);
      expect(iface, `interface ${i}`).toMatchObject({ url: expect.stringMatching(/^https?:\/\//), protocolBinding: expect.stringMatching(/\S/) });
    }
  });

  it(`[${T}::TestBindingFieldDeclaration::test_all_protocols_declared] {BIND-FIELD-001} declares the one binding it speaks, JSON-RPC, with the SDK's 0.3 twin`, async () => {
    const bindings = new Set(card.supportedInterfaces.map((i: { protocolBinding: string }) => i.protocolBinding));
    expect([...bindings]).toEqual(["JSONRPC"]);
    expect(card.supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion).sort()).toEqual(["0.3", "1.0"]);
    // What the card declares is what answers: a 1.0 call at the declared URL.
    const declared = card.supportedInterfaces.find((i: { protocolVersion: string }) => i.protocolVersion === "1.0");
    expect(declared.url).toBe(a2aBase(w.project.id));
    expect(rpcResult(await jsonRpc(w.project.id, "ListTasks", {}, { credential: w.member.token })).tasks).toBeInstanceOf(Array);
  });
});

describe("authentication", () => {
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

  it(`[${M}/authentication/test_auth_compliance_v030.py::test_security_scheme_structure_compliance | ${M}/security/test_agent_card_security.py::test_security_scheme_consistency | ${M}/authentication/test_auth_enforcement.py::test_authentication_scheme_consistency] declares a well-formed HTTP bearer scheme, and its security requirements name only declared schemes`, async () => {
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

  it(`[${M}/authentication/test_auth_enforcement.py::test_authentication_required_when_declared | ${M}/authentication/test_auth_compliance_v030.py::test_security_error_response_compliance | ${M}/security/test_in_task_authentication.py::test_authentication_challenge_headers] refuses a JSON-RPC request without credentials with 401, a problem and a bearer challenge, before any JSON-RPC is answered`, async () => {
    const reply = await getTaskWith({});
    expect(reply.status, reply.text).toBe(401);
    expect(reply.headers.get("Content-Type")).toBe("application/problem+json");
    expect(reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer\b/);
    expect(reply.json).not.toHaveProperty("jsonrpc");
  });

  it(`[${M}/authentication/test_auth_enforcement.py::test_invalid_credentials_rejected | ${M}/security/test_agent_card_security.py::test_authentication_scheme_validation | ${M}/security/test_in_task_authentication.py::test_invalid_authentication_handling] refuses every invalid credential the kit tries, and an expired JWT, with 401`, async () => {
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

  it(`[${M}/authentication/test_auth_compliance_v030.py::test_authentication_transport_consistency] takes an agent's API key as the bearer as well as a person's JWT`, async () => {
    const asAgent = await jsonRpc(w.project.id, "ListTasks", {}, { credential: w.agent.apiKey });
    expect(rpcResult(asAgent).tasks).toBeInstanceOf(Array);
    const card = await workerFetch(cardUrl(w.project.id), { headers: { Authorization: `Bearer ${w.agent.apiKey}` } });
    expect(card.status).toBe(200);
  });

  it(`[${M}/security/test_agent_card_security.py::test_public_agent_card_access_control] keeps a project's card private: 401 without credentials, 404 to a person outside the project or for a project that does not exist`, async () => {
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

  it(`[${M}/security/test_agent_card_security.py::test_sensitive_information_protection] exposes no secret, credential or detail of the agents' machines in the card`, async () => {
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
