/**
 * Request bodies of the hub's task API (API.md "Tasks", seed §6), accepting
 * exactly what the official CLI sends. Protocol objects inside them
 * (structured_spec, requirements, results) are checked by parseTaskProtocol.
 */
import { z } from "zod";
import { withinJsonLimit, withNullsAbsent } from "../http/fields";
import { type FieldError, zodFieldErrors } from "./field-errors";
import { dependencySchema, requirementsSchema, taskSpecSchema } from "./orchestratia-v1";
import { checkSchemaId } from "./schema-id";

/** `urgent` (task-format.md) is accepted as `critical`. */
export const priority = z
  .enum(["low", "normal", "high", "critical", "urgent"], { error: "must be one of low, normal, high, critical" })
  .transform((p) => (p === "urgent" ? "critical" : p));

const short = (max: number) => z.string().max(max, `must be at most ${max} characters`);
const object = z.record(z.string(), z.unknown(), { error: "must be an object" });

export const taskFields = {
  title: z.string().trim().min(1, "must not be empty").max(500, "must be at most 500 characters"),
  spec: short(200_000),
  type: z.string().trim().min(1, "must not be empty").max(100),
  priority,
  target_repo: short(500).nullish(),
  target_branch: short(500).nullish(),
  acceptance_criteria: z.array(short(2000)).max(100),
  /** Large specs go to R2 as DataRefs. */
  structured_spec: object.nullish(),
  /** Requirements are matched inline on every assignment: they stay small. */
  requirements: withinJsonLimit(object, 64 * 1024).nullish(),
  require_plan: z.boolean(),
  timeout_seconds: z
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(30 * 86400)
    .nullish(),
};

/** A create; null in an optional field is the field left out. */
export const createTaskBody = withNullsAbsent(
  z.looseObject({
    ...taskFields,
    spec: taskFields.spec.default(""),
    type: taskFields.type.default("feature"),
    priority: taskFields.priority.default("normal"),
    acceptance_criteria: taskFields.acceptance_criteria.default([]),
    require_plan: taskFields.require_plan.default(false),
    project_id: z.uuid("must be a UUID").optional(),
    session_id: z.uuid("must be a UUID").nullish(),
    dependencies: z.array(dependencySchema).max(100).optional(),
    dependency_ids: z.array(z.uuid("must be a task UUID")).max(100).optional(),
  }),
);

export const updateTaskBody = z
  .looseObject({
    title: taskFields.title.optional(),
    spec: taskFields.spec.optional(),
    type: taskFields.type.optional(),
    priority: taskFields.priority.optional(),
    target_repo: taskFields.target_repo,
    target_branch: taskFields.target_branch,
    acceptance_criteria: taskFields.acceptance_criteria.optional(),
    structured_spec: taskFields.structured_spec,
    requirements: taskFields.requirements,
    require_plan: taskFields.require_plan.optional(),
    timeout_seconds: taskFields.timeout_seconds,
    /** Held to the inline limit like a task-format request's: a payload is the task's input, not a bulk upload. */
    payload: withinJsonLimit(z.record(z.string(), z.unknown(), { error: "must be an object" })).optional(),
  })
  // payload (task-format) is kept as sent, and like spec cannot change once the task has left pending.
  .refine((b) => Object.keys(b).some((k) => k in taskFields || k === "payload"), "give at least one field to change");

export const assignBody = z
  .object({
    session_name: short(200).optional(),
    server_name: short(200).optional(),
    session_id: z.uuid("must be a UUID").optional(),
    require_plan: z.boolean().default(false),
  })
  .refine((b) => b.session_name || b.server_name || b.session_id, "give session_name, server_name or session_id");

/** Entries kept of each list of `git_diff_stats` (the CLI sends at most 50 `files`; `binary_files` it does not cut). */
export const MAX_DIFF_FILES = 200;
const diffCount = z.int("must be an integer").min(0, "must not be negative");
const diffPath = z.string("must be a string").max(4096, "must be at most 4096 characters");
const diffList = <T extends z.ZodType>(entry: T) =>
  z
    .array(entry, { error: "must be an array" })
    .nullish()
    .transform((list) => (list ?? []).slice(0, MAX_DIFF_FILES) as z.output<T>[]);
const commit = z
  .string("must be a string")
  .max(100, "must be at most 100 characters")
  .nullish()
  .transform((c) => c ?? null);

/** Most bytes of JSON a task keeps of `git_diff_stats`. */
const MAX_DIFF_STATS_BYTES = 64 * 1024;
const jsonBytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/**
 * The stats cut to fit `max` bytes of JSON: the lists lose their last entries, binary files first, and the counts stay
 * whole. A completion is never refused for what its CLI measured on the side.
 */
function fitWithin<T extends { files: unknown[]; binary_files: unknown[] }>(stats: T, max: number): T {
  let over = jsonBytes(stats) - max;
  if (over <= 0) return stats;
  const files = [...stats.files];
  const binary = [...stats.binary_files];
  // Each entry takes its JSON and a comma.
  while (over > 0 && (binary.length > 0 || files.length > 0)) over -= jsonBytes(binary.length > 0 ? binary.pop() : files.pop()) + 1;
  return { ...stats, files, binary_files: binary };
}

/**
 * What `orchestratia task complete` measures of the agent's last commit and sends beside the result
 * (cli.py cmd_complete, git_analyzer.capture_diff_stats). Unknown keys are dropped; the counts stay whole when the
 * lists are cut.
 */
export const gitDiffStats = z
  .object(
    {
      files_changed: diffCount,
      insertions: diffCount,
      deletions: diffCount,
      files: diffList(z.object({ path: diffPath, insertions: diffCount, deletions: diffCount }, { error: "must be an object" })),
      binary_files: diffList(diffPath),
      head_commit: commit,
      base_commit: commit,
    },
    { error: "must be an object" },
  )
  .transform((stats) => fitWithin(stats, MAX_DIFF_STATS_BYTES))
  .meta({
    description:
      "What the agent's last commit changed (`orchestratia task complete` sends it): counts, then `files` ({path, insertions, deletions}) and " +
      `\`binary_files\` (each cut to its first ${MAX_DIFF_FILES}, then from the end until the whole is at most 64 KiB of JSON), and the commits compared.`,
  });
export type GitDiffStats = z.output<typeof gitDiffStats>;

export const helpBody = z.looseObject({
  question: z.string().trim().min(1, "must not be empty").max(20_000),
  context: z.unknown().optional(),
  intervention_type: z
    .enum(["help", "question", "approval"], { error: "must be one of help, question, approval" })
    .optional()
    .meta({ description: "`help` when left out; a question to another session (`target_session_id`) is a `question`" }),
  target_session_id: z
    .uuid("must be a UUID")
    .nullish()
    .meta({ description: "Ask the agent of this open session of the task's project instead of a person: the task keeps its status" }),
});
export const planBody = z.object({ plan: z.unknown().refine((v) => v !== undefined && v !== null, "is required") });
export const reviseBody = z.object({ feedback: z.string().trim().min(1, "must not be empty").max(20_000) });
export const noteBody = z.object({
  content: z.string().trim().min(1, "must not be empty").max(20_000),
  urgent: z.boolean().default(false),
  notify_dependents: z
    .boolean()
    .default(false)
    .meta({ description: "The sessions working on the unfinished tasks that depend on this one hear of the note too (`note_for_session`)" }),
});
export const respondBody = z.object({ response: z.string().trim().min(1, "must not be empty").max(20_000) });
export const cancelBody = z.object({ reason: z.string().max(2000).nullish() });

export type ProtocolCheck = { ok: true; warnings: string[] } | { ok: false; errors: FieldError[] };

/**
 * structured_spec must be a task-spec (any version; other versions are
 * accepted with a warning); requirements are checked as requirements/v1.
 */
export function checkTaskProtocol(body: { structured_spec?: Record<string, unknown> | null; requirements?: Record<string, unknown> | null }): ProtocolCheck {
  const warnings: string[] = [];
  const errors: FieldError[] = [];
  if (body.structured_spec) {
    const id = checkSchemaId("task-spec", body.structured_spec.$schema);
    if (id.kind === "absent" || id.kind === "foreign") {
      errors.push({ path: "structured_spec.$schema", message: "must be orchestratia/task-spec/v1" });
    } else {
      if (id.kind === "other-version") warnings.push(id.warning);
      const parsed = taskSpecSchema.safeParse(body.structured_spec);
      if (!parsed.success) errors.push(...zodFieldErrors(parsed.error, "structured_spec"));
    }
  }
  if (body.requirements) {
    const id = checkSchemaId("requirements", body.requirements.$schema);
    if (id.kind === "other-version" || id.kind === "foreign") warnings.push(id.warning);
    const parsed = requirementsSchema.safeParse(body.requirements);
    if (!parsed.success) errors.push(...zodFieldErrors(parsed.error, "requirements"));
  }
  return errors.length ? { ok: false, errors } : { ok: true, warnings };
}
