/**
 * The agent envelopes (seeds/agent-envelope.md), as the hub maps them (pure).
 * An agent is given an input envelope built from its task, and may answer
 * with an output envelope as the result of `complete`; the envelope's
 * `success` and `recommendation` then decide how the task ends.
 */
import { z } from "zod";
import { withNullsAbsent } from "../http/fields";
import { type FieldError, zodFieldErrors } from "./field-errors";
import { isPlainObject } from "../domain/plain-object";

const text = (what: string) =>
  z
    .string({ error: `is required: ${what}` })
    .max(20_000, "must be at most 20000 characters")
    .refine((s) => s.trim().length > 0, "must not be empty");

/**
 * Whether an artifact's path stays inside the repository: relative (no leading `/` or `\`, no drive letter such as
 * `C:`) and with no `..` segment, whichever separator it uses.
 */
const isInsidePath = (path: string) => !/^[/\\]|^[A-Za-z]:/.test(path) && !path.split(/[/\\]/).includes("..");

/** A file the agent wrote: its path from the repository root and its complete content. */
export const artifactSchema = z.looseObject({
  path: z
    .string({ error: "is required: the file's path from the repository root" })
    .min(1, "must not be empty")
    .max(1000, "must be at most 1000 characters")
    .refine(isInsidePath, "must be relative to the repository root and stay inside it: no leading / or \\, no drive letter, no .. segment"),
  operation: z.enum(["create", "update"], { error: "must be one of create, update" }),
  content: z.string({ error: "is required: the complete file content" }),
});

export const RECOMMENDATIONS = ["proceed", "retry", "escalate"] as const;
export type Recommendation = (typeof RECOMMENDATIONS)[number];

/** The output envelope. Loose: fields the seed does not name are kept with it, never dropped. */
export const outputEnvelopeSchema = withNullsAbsent(z.looseObject({
  success: z.boolean({ error: "is required: true or false (did the agent complete its task?)" }),
  summary: text("what happened, in words (including errors)"),
  artifacts: z.array(artifactSchema, { error: "is required: a list of artifacts (it can be empty)" }).max(1000, "must have at most 1000 artifacts"),
  notes: z
    .array(z.string({ error: "must be a string" }).max(20_000, "must be at most 20000 characters"), { error: "must be a list of strings" })
    .max(200, "must have at most 200 notes")
    .optional(),
  recommendation: z.enum(RECOMMENDATIONS, { error: "must be one of proceed, retry, escalate" }),
}));
export type OutputEnvelope = z.infer<typeof outputEnvelopeSchema>;


/** A result with `success` and `recommendation` means to be an output envelope: it is read as one, and must be a valid one. */
export const isOutputEnvelope = (result: unknown): boolean => isPlainObject(result) && "success" in result && "recommendation" in result;

/** The envelope, or what is wrong with it, each field named under `prefix` (a complete's `result`). */
export function parseOutputEnvelope(raw: unknown, prefix = "result"): { ok: true; envelope: OutputEnvelope } | { ok: false; errors: FieldError[] } {
  const parsed = outputEnvelopeSchema.safeParse(raw);
  return parsed.success ? { ok: true, envelope: parsed.data } : { ok: false, errors: zodFieldErrors(parsed.error, prefix) };
}

/** How the task ends, as the envelope says. Plain data: it crosses into the project's room with the completion. */
export type EnvelopeOutcome =
  { status: "done" } | { status: "failed"; code: "AGENT_RETRY" | "AGENT_FAILED"; message: string } | { status: "needs_human"; question: string };

/**
 * The outcome rule. `escalate` wins over `success`: the agent asks for a
 * person, and a person is asked. `retry` fails the task as recoverable, so a
 * person (or orchestrator) may run it again. `success: false` with `proceed`
 * also fails it: the agent says the work is not done, and passing it on would
 * unblock downstream tasks on work that does not exist.
 */
export function envelopeOutcome(envelope: Pick<OutputEnvelope, "success" | "summary" | "recommendation">): EnvelopeOutcome {
  if (envelope.recommendation === "escalate") return { status: "needs_human", question: envelope.summary };
  if (envelope.recommendation === "retry") return { status: "failed", code: "AGENT_RETRY", message: envelope.summary };
  if (!envelope.success) return { status: "failed", code: "AGENT_FAILED", message: envelope.summary };
  return { status: "done" };
}

/** What an escalation's intervention carries besides its question: what the agent produced and noted so far. */
export const escalationContext = (envelope: Record<string, unknown>) => ({
  success: envelope.success,
  recommendation: envelope.recommendation,
  notes: Array.isArray(envelope.notes) ? envelope.notes : [],
  artifacts: Array.isArray(envelope.artifacts) ? envelope.artifacts : [],
});

// ---------------------------------------------------------------------------
// The input envelope

/** What of a task the input envelope is built from (the fields of the hub's task object it reads). */
export interface EnvelopeTask {
  id: string;
  type: string;
  spec: string;
  retry_count: number;
  target_repo: string | null;
  structured_spec: Record<string, unknown> | null;
  payload: unknown;
  context: Record<string, unknown> | null;
  resolved_inputs: Record<string, unknown>;
  recent_notes: { content: string }[];
}

export interface InputEnvelope {
  context: { feature_id: string; workflow: string; iteration: number };
  paths: Record<string, string>;
  task: { action: string; params: Record<string, unknown> };
  prior_context: string[];
}

const stringAt = (o: unknown, key: string): string | undefined => {
  const v = isPlainObject(o) ? o[key] : undefined;
  return typeof v === "string" && v.trim() ? v : undefined;
};

/** The longest a summarised input is in prior_context: notes, not content (the seed's "paths, not content"). */
export const INPUT_SUMMARY_CHARS = 200;

const shortText = (value: unknown) => {
  const whole = typeof value === "string" ? value : (JSON.stringify(value) ?? "null");
  return whole.length > INPUT_SUMMARY_CHARS ? `${whole.slice(0, INPUT_SUMMARY_CHARS - 1)}…` : whole;
};

/**
 * Every file path the task names: a task-format payload's own `paths`, the
 * spec's file references (by name, else by the path itself) and the
 * artifacts it expects, and the target repository.
 */
export function envelopePaths(task: Pick<EnvelopeTask, "payload" | "structured_spec" | "target_repo">): Record<string, string> {
  const paths: Record<string, string> = {};
  const spec = task.structured_spec;
  const references = isPlainObject(spec) && isPlainObject(spec.input_context) && Array.isArray(spec.input_context.references) ? spec.input_context.references : [];
  for (const ref of references) {
    const path = isPlainObject(ref) && ref.type === "file" ? stringAt(ref, "id") : undefined;
    if (path) paths[stringAt(ref, "name") ?? path] = path;
  }
  const expected =
    isPlainObject(spec) && isPlainObject(spec.output_expectations) && Array.isArray(spec.output_expectations.artifacts) ? spec.output_expectations.artifacts : [];
  for (const path of expected) if (typeof path === "string" && path.trim()) paths[path] = path;
  if (task.target_repo) paths.repo = task.target_repo;
  const own = isPlainObject(task.payload) && isPlainObject(task.payload.paths) ? task.payload.paths : {};
  for (const [name, path] of Object.entries(own)) if (typeof path === "string") paths[name] = path;
  return paths;
}

/** What the agent is to act on: a task-format payload, else the structured spec, else the spec text. */
export function envelopeParams(task: Pick<EnvelopeTask, "payload" | "structured_spec" | "spec">): Record<string, unknown> {
  if (task.payload !== null && task.payload !== undefined) return isPlainObject(task.payload) ? task.payload : { payload: task.payload };
  if (task.structured_spec) return task.structured_spec;
  return { spec: task.spec };
}

/**
 * The input envelope of a task. `upstreamResults` are the results of the
 * upstream tasks its resolved dependencies name: an output envelope's notes
 * pass forward (no agent names, as the seed says), then the task's resolved
 * inputs as short notes, then the notes people and agents left on the task.
 */
export function inputEnvelope(task: EnvelopeTask, upstreamResults: readonly unknown[]): InputEnvelope {
  const upstreamNotes = upstreamResults.flatMap((r) => {
    const notes: unknown = isPlainObject(r) && isOutputEnvelope(r) ? r.notes : undefined;
    return Array.isArray(notes) ? notes.filter((n): n is string => typeof n === "string") : [];
  });
  const inputs = Object.entries(task.resolved_inputs).map(([key, data]) =>
    data === null ? `Input ${key}: not delivered` : `Input ${key}: ${shortText(data)}`,
  );
  return {
    context: {
      feature_id: stringAt(task.context, "feature_id") ?? stringAt(task.context, "featureId") ?? stringAt(task.structured_spec, "feature_id") ?? task.id,
      workflow: stringAt(task.context, "workflow") ?? task.type,
      iteration: task.retry_count + 1,
    },
    paths: envelopePaths(task),
    task: { action: task.type, params: envelopeParams(task) },
    prior_context: [...upstreamNotes, ...inputs, ...task.recent_notes.map((n) => n.content)],
  };
}
