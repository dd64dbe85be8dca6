/**
 * What each coding agent's telemetry calls its usage, as its own documentation names it, and which of its signals the
 * hub counts, so that an agent sending the same usage twice (as a metric and as an event) is counted once. Pure.
 *
 * Claude Code (code.claude.com/docs/en/monitoring-usage): metrics `claude_code.cost.usage` (USD, attribute `model`)
 * and `claude_code.token.usage` (attribute `type`: input | output | cacheRead | cacheCreation, and `model`), delta by
 * default; the event `claude_code.api_request` repeats each request's cost and tokens with `duration_ms`. Its events
 * carry `event.name` without the prefix (`api_request`) and the full name in the body. Standard attributes include
 * `session.id`; the resource's `service.name` is `claude-code`, and keys of OTEL_RESOURCE_ATTRIBUTES are copied onto
 * every point and event. Rule: the metrics are the source of its cost and tokens; `api_request` adds only API time.
 * Its `tool_decision` event (`tool_name`, `decision` accept | reject, `source`: config, hook, user_temporary,
 * user_permanent, user_abort, user_reject) is made for every permission decision, so it is the source of the
 * permission log's telemetry entries (tool-decisions.ts); `tool_result` (made after an accepted call ran: `success`,
 * `duration_ms`, `decision_type`/`decision_source`, `tool_parameters` under OTEL_LOG_TOOL_DETAILS=1) repeats the
 * accepted calls and is not read, so a call is one entry.
 *
 * Codex (openai/codex docs/config.md, "otel"): no cost and no token metric; the event `codex.sse_event` carries, when
 * its `event.kind` is `response.completed`, `input_token_count`, `output_token_count`, `cached_token_count`,
 * `reasoning_token_count` and `tool_token_count`; `codex.api_request` carries `duration_ms`. Every event has
 * `conversation.id` and `model`; `service.name` is the CLI's originator (`codex_cli_rs`, `codex_exec`, ...). Counts follow
 * the OpenAI usage object: input includes the cached tokens and output includes the reasoning tokens. Rule: the events
 * are the source of its tokens and API time.
 *
 * Gemini CLI (google-gemini/gemini-cli docs/cli/telemetry.md): the event `gemini_cli.api_response` carries `model`,
 * `duration_ms`, `input_token_count`, `output_token_count`, `cached_content_token_count`, `thoughts_token_count` and
 * `tool_token_count`; the metric `gemini_cli.token.usage` repeats those tokens by `type`. `session.id` is on every
 * record and on the resource, whose `service.name` is `gemini-cli`. Counts follow Gemini's usage metadata: the prompt
 * count includes the cached tokens; thoughts and tool-use prompts are counted apart from output and prompt. Rule: the
 * events are the source of its tokens and API time; its token metric is not read.
 */
import type { UsageAmounts } from "../domain/usage";
import type { AgentType } from "../domain/agent-types";
import type { Attributes, AttrValue } from "./otlp-model";

/** Metric name → how a data point's value is counted (null: this point is not usage). */
export const USAGE_METRICS: Record<string, (point: Attributes) => keyof UsageAmounts | null> = {
  "claude_code.cost.usage": () => "cost_usd",
  "claude_code.token.usage": (point) => CLAUDE_TOKEN_TYPES[String(point.type)] ?? null,
};

const CLAUDE_TOKEN_TYPES: Record<string, keyof UsageAmounts> = {
  input: "input_tokens",
  output: "output_tokens",
  cacheRead: "cache_read_tokens",
  cacheCreation: "cache_write_tokens",
};

/** A number an attribute holds, whether the exporter wrote it as a number or as a string; 0 when absent or not one. */
export function numberOf(value: AttrValue | undefined): number {
  const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : NaN;
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Event name → what the event counts (null: nothing, such as a stream event other than a completed response). */
export const USAGE_EVENTS: Record<string, (a: Attributes) => Partial<UsageAmounts> | null> = {
  "claude_code.api_request": (a) => ({ api_ms: numberOf(a.duration_ms) }),
  "codex.sse_event": (a) => {
    if (a["event.kind"] !== "response.completed") return null;
    const cached = numberOf(a.cached_token_count);
    return {
      input_tokens: Math.max(0, numberOf(a.input_token_count) - cached),
      cache_read_tokens: cached,
      output_tokens: numberOf(a.output_token_count),
    };
  },
  "codex.api_request": (a) => ({ api_ms: numberOf(a.duration_ms) }),
  "gemini_cli.api_response": (a) => {
    const cached = numberOf(a.cached_content_token_count);
    return {
      input_tokens: Math.max(0, numberOf(a.input_token_count) - cached) + numberOf(a.tool_token_count),
      cache_read_tokens: cached,
      output_tokens: numberOf(a.output_token_count) + numberOf(a.thoughts_token_count),
      api_ms: numberOf(a.duration_ms),
    };
  },
};

/** Claude Code names its events without the prefix in `event.name` (the body has the full name). */
const CLAUDE_CODE_SERVICE = "claude-code";

/** Which of the `known` events a log record is, if any: by its `event_name` field, its body, or its `event.name` attribute. */
export function eventOf(
  record: { eventName: string; body: AttrValue | null; attributes: Attributes },
  resource: Attributes,
  known: Readonly<Record<string, unknown>>,
): string | null {
  const named = record.attributes["event.name"];
  const candidates = [
    record.eventName,
    record.body,
    named,
    typeof named === "string" && resource["service.name"] === CLAUDE_CODE_SERVICE ? `claude_code.${named}` : null,
  ];
  for (const c of candidates) if (typeof c === "string" && Object.hasOwn(known, c)) return c;
  return null;
}

/** Which usage event a log record is, if any. */
export const usageEventOf = (record: { eventName: string; body: AttrValue | null; attributes: Attributes }, resource: Attributes) =>
  eventOf(record, resource, USAGE_EVENTS);

/** The agent type a resource's `service.name` names, as the daemon names agent types (domain/agent-types.ts). */
export function agentTypeOfService(serviceName: AttrValue | undefined): AgentType | null {
  if (typeof serviceName !== "string") return null;
  if (serviceName === CLAUDE_CODE_SERVICE) return "claude_code";
  if (serviceName.startsWith("codex")) return "codex_cli";
  if (serviceName === "gemini-cli") return "gemini_cli";
  return null;
}

/** The resource attribute naming the hub session (set from ORCHESTRATIA_SESSION_ID through OTEL_RESOURCE_ATTRIBUTES). */
export const HUB_SESSION_ATTRIBUTE = "orchestratia.session_id";

/** The agent's own session id: Claude Code's and Gemini CLI's `session.id`, Codex's `conversation.id`. */
export const AGENT_SESSION_ATTRIBUTES = ["session.id", "conversation.id"] as const;
