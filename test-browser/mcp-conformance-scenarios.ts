/**
 * Every server scenario of the MCP conformance package (@modelcontextprotocol/conformance, pinned in package.json), per
 * protocol revision: each either applies to the hub, or is skipped with why. Most scenarios call the reference server's
 * fixtures (tools such as `test_simple_text`, `greet`, `slow_compute`; resources under `test://`), which the hub does not
 * have and must not grow: they are named here. test-browser/mcp-conformance.test.ts checks that this table names exactly
 * the scenarios the package lists, so a new one in a version bump fails until it is classified.
 */

export const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
export type Revision = (typeof REVISIONS)[number];

/**
 * The revisions the hub serves, whose applicable scenarios run. A revision listed in REVISIONS but not here is
 * classified and reported as not run; the test fails once the hub answers it, until it is added here.
 */
export const SERVED_REVISIONS: readonly Revision[] = ["2025-11-25", "2026-07-28"];

export interface Applies {
  scenario: string;
  revision: Revision;
  applies: true;
  /** Checks known to fail, each with why (a hub defect, or a check that calls a reference fixture): the run must fail exactly these. */
  expectedFailures?: Record<string, string>;
}
export interface Skipped {
  scenario: string;
  revision: Revision;
  skip: string;
}
export type Classified = Applies | Skipped;

const tool = (name: string) => `needs the reference server's fixture tool \`${name}\``;
const tools = (...names: string[]) => `needs the reference server's fixture tools ${names.map((n) => `\`${n}\``).join(", ")}`;
const prompt = (name: string) => `needs the reference server's fixture prompt \`${name}\``;
const resource = (uri: string) => `needs the reference server's fixture resource \`${uri}\``;

/** Both revisions ask for these the same way. */
const FIXTURES: Record<string, string> = {
  "completion-complete": `the hub declares no \`completions\` capability; ${prompt("test_prompt_with_arguments")}`,
  "tools-call-simple-text": tool("test_simple_text"),
  "tools-call-image": tool("test_image_content"),
  "tools-call-audio": tool("test_audio_content"),
  "tools-call-embedded-resource": tool("test_embedded_resource"),
  "tools-call-mixed-content": tool("test_multiple_content_types"),
  "tools-call-error": tool("test_error_handling"),
  "tools-call-with-progress": tool("test_tool_with_progress"),
  "resources-read-text": resource("test://static-text"),
  "resources-read-binary": resource("test://static-binary"),
  "resources-templates-read": `needs the reference server's fixture resource template \`test://template/{id}/data\``,
  "prompts-get-simple": prompt("test_simple_prompt"),
  "prompts-get-with-args": prompt("test_prompt_with_arguments"),
  "prompts-get-embedded-resource": prompt("test_prompt_with_embedded_resource"),
  "prompts-get-with-image": prompt("test_prompt_with_image"),
  "json-schema-2020-12": tool("json_schema_2020_12_tool"),
};

const applies = (scenario: string, revision: Revision, expectedFailures?: Record<string, string>): Applies => ({
  scenario,
  revision,
  applies: true,
  ...(expectedFailures ? { expectedFailures } : {}),
});
const skipped = (scenario: string, revision: Revision, skip: string): Skipped => ({ scenario, revision, skip });
const fixtures = (revision: Revision, names: string[]) => names.map((s) => skipped(s, revision, FIXTURES[s]!));

const V2025: Classified[] = [
  applies("server-initialize", "2025-11-25"),
  applies("ping", "2025-11-25"),
  applies("tools-list", "2025-11-25"),
  applies("resources-list", "2025-11-25"),
  applies("prompts-list", "2025-11-25"),
  applies("server-sse-multiple-streams", "2025-11-25"),
  applies("dns-rebinding-protection", "2025-11-25"),
  applies("server-session-lifecycle", "2025-11-25"),
  skipped("logging-set-level", "2025-11-25", "the hub declares no `logging` capability"),
  skipped("tools-call-with-logging", "2025-11-25", `the hub declares no \`logging\` capability; ${tool("test_tool_with_logging")}`),
  skipped("tools-call-sampling", "2025-11-25", tool("test_sampling")),
  skipped("tools-call-elicitation", "2025-11-25", tool("test_elicitation")),
  skipped("elicitation-sep1034-defaults", "2025-11-25", tool("test_elicitation_sep1034_defaults")),
  skipped("elicitation-sep1330-enums", "2025-11-25", tool("test_elicitation_sep1330_enums")),
  skipped("resources-subscribe", "2025-11-25", resource("test://watched-resource")),
  skipped("resources-unsubscribe", "2025-11-25", resource("test://watched-resource")),
  skipped("server-sse-polling", "2025-11-25", tool("test_reconnection")),
  ...fixtures("2025-11-25", Object.keys(FIXTURES)),
];

const TASKS = "the Tasks extension scenarios create tasks through fixture tools, not the hub's";
const inputRequired = (name: string) => `${tool(name)} (an ephemeral input_required round trip)`;

const V2026: Classified[] = [
  applies("server-stateless", "2026-07-28", {
    "sep-2575-server-rejects-undeclared-capability": tool("test_missing_capability"),
    "sep-2575-missing-capability-http-400": tool("test_missing_capability"),
    "sep-2575-http-server-no-independent-requests-on-stream": tool("test_streaming_elicitation"),
    "sep-2575-server-no-log-without-loglevel": tool("test_logging_tool"),
  }),
  applies("tools-list", "2026-07-28"),
  applies("resources-list", "2026-07-28"),
  applies("prompts-list", "2026-07-28"),
  applies("server-sse-multiple-streams", "2026-07-28"),
  applies("sep-2164-resource-not-found", "2026-07-28"),
  applies("dns-rebinding-protection", "2026-07-28"),
  applies("caching", "2026-07-28"),
  applies("http-header-validation", "2026-07-28"),
  applies("input-required-result-unsupported-methods", "2026-07-28"),
  applies("tasks-capability-negotiation", "2026-07-28", {
    "sep-2663-server-rejects-undeclared-client": tool("slow_compute"),
    "tasks-per-request-meta-opt-in": tool("slow_compute"),
  }),
  applies("tasks-dispatch-and-envelope", "2026-07-28", {
    "tasks-server-directed-creation-no-hint": tool("failing_job"),
    "sep-2663-legacy-task-param-ignored": tool("greet"),
    "tasks-immediate-result-shortcut": tool("slow_compute"),
    "tasks-result-type-complete-on-non-task-responses": tool("greet"),
    "sep-2663-durable-create-strong-consistency": tool("slow_compute"),
  }),
  skipped("http-custom-header-server-validation", "2026-07-28", "no hub tool declares an `x-mcp-header` parameter (SEP-2243 custom headers)"),
  skipped("input-required-result-basic-elicitation", "2026-07-28", inputRequired("test_input_required_result_elicitation")),
  skipped("input-required-result-basic-sampling", "2026-07-28", inputRequired("test_input_required_result_sampling")),
  skipped("input-required-result-basic-list-roots", "2026-07-28", inputRequired("test_input_required_result_list_roots")),
  skipped("input-required-result-request-state", "2026-07-28", inputRequired("test_input_required_result_request_state")),
  skipped("input-required-result-multiple-input-requests", "2026-07-28", inputRequired("test_input_required_result_multiple_inputs")),
  skipped("input-required-result-multi-round", "2026-07-28", inputRequired("test_input_required_result_multi_round")),
  skipped("input-required-result-missing-input-response", "2026-07-28", inputRequired("test_input_required_result_elicitation")),
  skipped("input-required-result-non-tool-request", "2026-07-28", prompt("test_input_required_result_prompt")),
  skipped("input-required-result-result-type", "2026-07-28", inputRequired("test_input_required_result_elicitation")),
  skipped("input-required-result-tampered-state", "2026-07-28", inputRequired("test_input_required_result_tampered_state")),
  skipped("input-required-result-capability-check", "2026-07-28", inputRequired("test_input_required_result_capabilities")),
  skipped("input-required-result-ignore-extra-params", "2026-07-28", inputRequired("test_input_required_result_elicitation")),
  skipped("input-required-result-validate-input", "2026-07-28", inputRequired("test_input_required_result_elicitation")),
  skipped("tasks-lifecycle", "2026-07-28", `${TASKS}: ${tools("greet", "slow_compute", "failing_job", "protocol_error_job")}`),
  skipped("tasks-wire-fields", "2026-07-28", `${TASKS}: ${tool("slow_compute")}`),
  skipped("tasks-request-state-removal", "2026-07-28", `${TASKS}: ${tool("slow_compute")}`),
  skipped("tasks-mrtr-input", "2026-07-28", `${TASKS}: ${tool("confirm_delete")}`),
  skipped("tasks-request-headers", "2026-07-28", `${TASKS}: ${tools("greet", "slow_compute")}`),
  skipped("tasks-required-task-error", "2026-07-28", `${TASKS}: ${tool("failing_job")} (declared \`taskSupport: "required"\`)`),
  skipped("tasks-mrtr-composition", "2026-07-28", `${TASKS}: ${tool("test_tool_with_task")}`),
  skipped("tasks-status-notifications", "2026-07-28", "the package skips it itself (its harness awaits a rewrite onto subscriptions/listen)"),
  skipped("sep-2640-skills-directory", "2026-07-28", "the hub declares no `io.modelcontextprotocol/skills` extension"),
  skipped("sep-2640-skills-enumeration", "2026-07-28", "the hub declares no `io.modelcontextprotocol/skills` extension"),
  skipped("sep-2640-skills-manifest", "2026-07-28", "the hub declares no `io.modelcontextprotocol/skills` extension"),
  ...fixtures("2026-07-28", Object.keys(FIXTURES)),
];

export const SCENARIOS: readonly Classified[] = [...V2025, ...V2026];

export const isApplicable = (c: Classified): c is Applies => "applies" in c;
export const isSkipped = (c: Classified): c is Skipped => "skip" in c;
