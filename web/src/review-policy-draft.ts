/**
 * A project's code-review policy as its form holds it (text as typed) and the body the form sends. Lists are typed
 * comma-separated; a blank number is left out for the hub's default; the key is sent only when one is typed, so a
 * blank key field keeps the kept one.
 */
import type { ReviewPolicy, ReviewPolicyBody } from "./types";

export type Priority = NonNullable<NonNullable<ReviewPolicyBody["match"]>["priorities"]>[number];
export const PRIORITIES: Priority[] = ["critical", "high", "normal", "low"];

export interface PolicyDraft {
  enabled: boolean;
  kind: ReviewPolicy["reviewer"]["kind"];
  capability: string;
  endpoint: string;
  apiStyle: "openai" | "anthropic";
  model: string;
  apiKey: string;
  passScore: string;
  warnScore: string;
  maxRetries: string;
  onFinalFailure: ReviewPolicy["on_final_failure"];
  types: string;
  tags: string;
  priorities: Priority[];
  paths: string;
  minLines: string;
}

/** The policy's fields the form names, as the hub's refusals name them. */
export const POLICY_FIELDS = [
  "enabled",
  "reviewer.kind",
  "reviewer.capability",
  "reviewer.endpoint",
  "reviewer.api_style",
  "reviewer.model",
  "reviewer.api_key",
  "pass_score",
  "warn_score",
  "max_retries",
  "on_final_failure",
  "match.types",
  "match.tags",
  "match.priorities",
  "match.paths",
  "match.min_lines",
] as const;
export type PolicyField = (typeof POLICY_FIELDS)[number];

const joined = (list: string[] | undefined) => (list ?? []).join(", ");
const listOf = (typed: string) =>
  typed
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
/** A typed number: blank is left out; anything else goes as a number for the hub to check. */
const numberOf = (typed: string) => (typed.trim() === "" ? undefined : Number(typed));

export function draftOf(p: ReviewPolicy): PolicyDraft {
  return {
    enabled: p.enabled,
    kind: p.reviewer.kind,
    capability: p.reviewer.capability,
    endpoint: p.reviewer.endpoint ?? "",
    apiStyle: p.reviewer.api_style ?? "openai",
    model: p.reviewer.model ?? "",
    apiKey: "",
    passScore: String(p.pass_score),
    warnScore: String(p.warn_score),
    maxRetries: String(p.max_retries),
    onFinalFailure: p.on_final_failure,
    types: joined(p.match.types),
    tags: joined(p.match.tags),
    priorities: (p.match.priorities ?? []).filter((x): x is Priority => (PRIORITIES as string[]).includes(x)),
    paths: joined(p.match.paths),
    minLines: p.match.min_lines === undefined ? "" : String(p.match.min_lines),
  };
}

export function bodyOf(d: PolicyDraft): ReviewPolicyBody {
  const match: NonNullable<ReviewPolicyBody["match"]> = {};
  if (listOf(d.types).length) match.types = listOf(d.types);
  if (listOf(d.tags).length) match.tags = listOf(d.tags);
  if (d.priorities.length) match.priorities = d.priorities;
  if (listOf(d.paths).length) match.paths = listOf(d.paths);
  const minLines = numberOf(d.minLines);
  if (minLines !== undefined) match.min_lines = minLines;
  const reviewer: ReviewPolicyBody["reviewer"] =
    d.kind === "agent"
      ? { kind: "agent", capability: d.capability.trim() || "code-review" }
      : {
          kind: "model",
          endpoint: d.endpoint.trim() || undefined,
          api_style: d.apiStyle,
          model: d.model.trim() || undefined,
          ...(d.apiKey ? { api_key: d.apiKey } : {}),
        };
  return {
    enabled: d.enabled,
    match,
    reviewer,
    pass_score: numberOf(d.passScore),
    warn_score: numberOf(d.warnScore),
    max_retries: numberOf(d.maxRetries),
    on_final_failure: d.onFinalFailure,
  };
}
