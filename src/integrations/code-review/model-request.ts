/**
 * A model reviewer's call, as data (API.md "Code review", `reviewer.kind: model`): where it goes, what it asks (the
 * task, its acceptance criteria and the change's diff, with the review's JSON schema as structured output), and what
 * its answer means. OpenAI-compatible chat completions use `response_format: json_schema` (strict); the Anthropic
 * Messages API a `review` tool the model is made to call. Pure: the reviewer object does the I/O.
 */
import { FINDING_SEVERITIES, VERDICTS, type ModelApiStyle, type Review } from "../../domain/code-review";
import { parseReview } from "../../protocol/code-review";

/** The diff the model is sent is cut beyond this many bytes (UTF-8), and the prompt says so. */
export const MAX_DIFF_BYTES = 200_000;
/** The most tokens the model may answer with (Anthropic requires a bound). */
const MAX_TOKENS = 8192;

/**
 * The URL a style is called at. `endpoint` is either the full URL (ending in `/chat/completions` or `/messages`) or
 * a base the path is added to: `…/v1` gets `/chat/completions` (`/messages`), anything else `/v1/chat/completions`
 * (`/v1/messages`). So `https://api.openai.com/v1` and `https://api.anthropic.com` both work as given.
 */
export function modelUrl(endpoint: string, style: ModelApiStyle): string {
  const path = style === "openai" ? "/chat/completions" : "/messages";
  const url = new URL(endpoint);
  const base = url.pathname.replace(/\/+$/, "");
  if (base.endsWith(path)) return url.toString();
  url.pathname = `${base}${base.endsWith("/v1") ? "" : "/v1"}${path}`;
  return url.toString();
}

const finding = {
  type: "object",
  properties: {
    severity: { type: "string", enum: [...FINDING_SEVERITIES] },
    title: { type: "string", description: "One line" },
    detail: { type: "string", description: "What is wrong and how to fix it" },
    path: { type: ["string", "null"], description: "The file, as in the diff; null when the finding is not about one file" },
    line: { type: ["integer", "null"], description: "The line in the new file; null when unknown" },
  },
  required: ["severity", "title", "detail", "path", "line"],
  additionalProperties: false,
};

/** The review as JSON Schema, in the subset strict structured output accepts (every field required; absent is null). */
export const REVIEW_SCHEMA = {
  type: "object",
  properties: {
    score: { type: "integer", description: "0 to 100: how ready the change is to merge as the task asked" },
    status: { type: "string", enum: [...VERDICTS] },
    summary: { type: "string", description: "A few sentences on the change as a whole" },
    findings: { type: "array", items: finding },
  },
  required: ["score", "status", "summary", "findings"],
  additionalProperties: false,
};

const INSTRUCTIONS =
  "You review code changes made by an agent for a task. Judge the diff against the task's spec and acceptance criteria: correctness, " +
  "security, missing pieces, tests, and clarity. Score 0-100 (80 or more: ready to merge). List findings worst first, each with the file " +
  "and line of the new code when it is about one. Answer only with the review, in the schema given.";

export interface ReviewSubject {
  title: string;
  spec: string;
  acceptanceCriteria: readonly string[];
  range: string;
  stats: { files_changed: number; insertions: number; deletions: number };
  diff: string;
}

const encoder = new TextEncoder();

/** The diff within MAX_DIFF_BYTES, never splitting a character, and whether it was cut. */
export function cappedDiff(diff: string): { text: string; cut: boolean; bytes: number } {
  const bytes = encoder.encode(diff);
  if (bytes.byteLength <= MAX_DIFF_BYTES) return { text: diff, cut: false, bytes: bytes.byteLength };
  let end = MAX_DIFF_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), cut: true, bytes: bytes.byteLength };
}

/** What the model is asked: the task, its criteria, the change's size, and its diff (cut, and said so, when large). */
export function reviewPrompt(s: ReviewSubject): string {
  const diff = cappedDiff(s.diff);
  return [
    `Task: ${s.title}`,
    `Spec:\n${s.spec}`,
    s.acceptanceCriteria.length ? `Acceptance criteria:\n${s.acceptanceCriteria.map((c) => `- ${c}`).join("\n")}` : "Acceptance criteria: none given.",
    `The change: git diff ${s.range} (${s.stats.files_changed} files, +${s.stats.insertions}/-${s.stats.deletions}).`,
    diff.cut ? `The diff was cut: it has ${diff.bytes} bytes, only the first ${MAX_DIFF_BYTES} are below. Do not report the cut as a finding.` : "",
    "```diff\n" + diff.text + "\n```",
  ]
    .filter((p) => p.length > 0)
    .join("\n\n");
}

/** The request for a style: headers (with the key) and JSON body. */
export function modelRequest(style: ModelApiStyle, model: string, key: string, prompt: string): { headers: Record<string, string>; body: unknown } {
  if (style === "openai") {
    return {
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
      body: {
        model,
        messages: [
          { role: "system", content: INSTRUCTIONS },
          { role: "user", content: prompt },
        ],
        response_format: { type: "json_schema", json_schema: { name: "review", strict: true, schema: REVIEW_SCHEMA } },
      },
    };
  }
  return {
    headers: { "Content-Type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" },
    body: {
      model,
      max_tokens: MAX_TOKENS,
      system: INSTRUCTIONS,
      messages: [{ role: "user", content: prompt }],
      tools: [{ name: "review", description: "Record the review of the change", input_schema: REVIEW_SCHEMA }],
      tool_choice: { type: "tool", name: "review" },
    },
  };
}

export type ModelAnswer = { ok: true; review: Review } | { ok: false; error: string };

const obj = (v: unknown): Record<string, unknown> | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** The schema's nulls (strict output has no optional fields) as the Review's absent ones. */
function withoutNulls(value: unknown): unknown {
  const review = obj(value);
  if (!review || !Array.isArray(review.findings)) return value;
  const findings = review.findings.map((f) => {
    const o = obj(f);
    return o ? Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null)) : f;
  });
  return { ...review, findings };
}

function reviewOf(value: unknown): ModelAnswer {
  const parsed = parseReview(withoutNulls(value), "review");
  if (parsed.ok) return parsed;
  const [first] = parsed.issues;
  return { ok: false, error: `the model's review is not valid: ${first!.path} ${first!.message}` };
}

/** What a 2xx answer of the style holds: the review, or why there is none (a refusal, a cut or malformed answer). */
export function readAnswer(style: ModelApiStyle, json: unknown): ModelAnswer {
  const answer = obj(json);
  if (!answer) return { ok: false, error: "the model's answer is not a JSON object" };
  if (style === "openai") {
    const choice = Array.isArray(answer.choices) ? obj(answer.choices[0]) : null;
    const message = obj(choice?.message);
    if (!message) return { ok: false, error: "the model's answer has no message (choices[0].message)" };
    if (typeof message.refusal === "string" && message.refusal) return { ok: false, error: `the model refused to review: ${message.refusal.slice(0, 300)}` };
    if (choice!.finish_reason === "length") return { ok: false, error: "the model's answer was cut at its token limit" };
    if (typeof message.content !== "string") return { ok: false, error: "the model's answer has no content" };
    try {
      return reviewOf(JSON.parse(message.content));
    } catch {
      return { ok: false, error: "the model's answer is not JSON" };
    }
  }
  if (answer.stop_reason === "refusal") return { ok: false, error: "the model refused to review (stop_reason refusal)" };
  const call = Array.isArray(answer.content) ? answer.content.map(obj).find((b) => b?.type === "tool_use" && b.name === "review") : undefined;
  if (!call) {
    const why = answer.stop_reason === "max_tokens" ? " (cut at its token limit)" : "";
    return { ok: false, error: `the model's answer has no call of the review tool${why}` };
  }
  return reviewOf(call.input);
}

/** An error answer's own message (OpenAI's and Anthropic's `error.message`), short, without the key. */
export function errorMessage(text: string, key: string): string {
  let message = text;
  try {
    const e = obj(obj(JSON.parse(text))?.error);
    if (typeof e?.message === "string") message = e.message;
  } catch {
    // Not JSON: the text itself.
  }
  return (key ? message.replaceAll(key, "[key]") : message).replace(/\s+/g, " ").trim().slice(0, 300);
}

/** Statuses worth another try (rate limits, the provider's own trouble); any other non-2xx is final. */
export const retryable = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;
