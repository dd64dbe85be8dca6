/**
 * The three forms of a completion result (seed §2): a task-result/v1 object,
 * a legacy object (no `$schema`, stored as is), or a string. Strings — and
 * any other JSON value the CLI may send — are wrapped as
 * `{summary, completed_by: "agent:<server>"}`. An agent envelope's output
 * (seeds/agent-envelope.md) is a fourth: kept as sent, with the outcome it asks for.
 */
import { envelopeOutcome, isOutputEnvelope, parseOutputEnvelope, type EnvelopeOutcome } from "../protocol/agent-envelope";
import { type FieldError, zodFieldErrors } from "../protocol/field-errors";
import { taskResultSchema } from "../protocol/orchestratia-v1";
import { checkSchemaId } from "../protocol/schema-id";
import { isPlainObject } from "./plain-object";

export type NormalisedResult =
  { ok: true; result: Record<string, unknown>; structured: boolean; warnings: string[]; envelope?: EnvelopeOutcome } | { ok: false; errors: FieldError[] };

/**
 * A contract entry without `status` is fulfilled data (the shape the official
 * agent skill documents: `{type, description, data}` or the data itself).
 */
export function normaliseContract(entry: unknown): Record<string, unknown> {
  if (!isPlainObject(entry)) return { status: "fulfilled", data: entry };
  if (entry.status !== undefined) return entry;
  return { ...entry, status: "fulfilled", data: "data" in entry ? entry.data : entry };
}

export function normaliseResult(raw: unknown, serverName: string): NormalisedResult {
  const completedBy = `agent:${serverName}`;
  if (typeof raw === "string") return { ok: true, result: { summary: raw, completed_by: completedBy }, structured: false, warnings: [] };
  if (!isPlainObject(raw)) {
    return { ok: true, result: { summary: JSON.stringify(raw), value: raw, completed_by: completedBy }, structured: false, warnings: [] };
  }
  // An agent envelope's result decides how the task ends; a malformed one is refused, never stored as an opaque result.
  if (isOutputEnvelope(raw)) {
    const parsed = parseOutputEnvelope(raw);
    if (!parsed.ok) return parsed;
    return { ok: true, result: parsed.envelope, structured: false, warnings: [], envelope: envelopeOutcome(parsed.envelope) };
  }
  const schema = checkSchemaId("task-result", raw.$schema);
  if (schema.kind === "absent") return { ok: true, result: raw, structured: false, warnings: [] };
  if (schema.kind === "foreign") return { ok: true, result: raw, structured: false, warnings: [schema.warning] };

  const parsed = taskResultSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, errors: zodFieldErrors(parsed.error, "result") };
  const contracts = parsed.data.contracts
    ? Object.fromEntries(Object.entries(parsed.data.contracts).map(([key, entry]) => [key, normaliseContract(entry)]))
    : undefined;
  return {
    ok: true,
    result: { ...parsed.data, ...(contracts ? { contracts } : {}) },
    structured: true,
    warnings: schema.kind === "other-version" ? [schema.warning] : [],
  };
}
