/**
 * Schemas of seeds/orchestratia-protocols-v1.md. Objects are loose: fields
 * the seed does not name are kept, since every protocol feature is opt-in and
 * newer agents may send more.
 */
import { z } from "zod";

const name = z.string().trim().min(1, "must not be empty").max(200, "must be at most 200 characters");
const names = z.array(name).max(200, "must have at most 200 entries");

/** §5 Agent Capabilities Schema. */
export const capabilitiesSchema = z.looseObject({
  $schema: z.string().max(200).optional(),
  repos: z
    .record(
      z.string().max(200),
      z.looseObject({ path: z.string().max(1000).optional(), languages: names.optional(), tools: names.optional() }),
    )
    .optional(),
  languages: names.optional(),
  tools: names.optional(),
  environments: names.optional(),
  tags: names.optional(),
  max_concurrent_tasks: z.int("must be an integer").min(1, "must be at least 1").max(1000, "must be at most 1000").optional(),
  /** The hub's: the agent's role (agent-orchestrator-messages.md), or several; "worker" when neither is given. */
  role: name.optional(),
  roles: names.optional(),
});
export type Capabilities = z.infer<typeof capabilitiesSchema>;

/** Contract keys name data flowing between tasks: alphanumeric with underscores (§1 Validation). */
export const contractKey = z.string().regex(/^[A-Za-z0-9_]+$/, "must be alphanumeric with underscores").max(100);

const taskReference = z
  .looseObject({
    type: z.enum(["task", "file", "url"]),
    id: z.string().max(500).optional(),
    url: z.string().max(2000).optional(),
    description: z.string().max(2000).optional(),
  })
  .superRefine((ref, ctx) => {
    if (ref.type === "url" && !ref.url) ctx.addIssue({ code: "custom", path: ["url"], message: "is required for a url reference" });
    if ((ref.type === "task" || ref.type === "file") && !ref.id) {
      ctx.addIssue({ code: "custom", path: ["id"], message: `is required for a ${ref.type} reference` });
    }
    if (ref.type === "task" && ref.id && !z.uuid().safeParse(ref.id).success) {
      ctx.addIssue({ code: "custom", path: ["id"], message: "must be a task UUID" });
    }
  });

/** §1 Task Spec Format: orchestratia/task-spec/v1. */
export const taskSpecSchema = z.looseObject({
  $schema: z.string({ error: "is required: orchestratia/task-spec/v1" }).max(200),
  requirements: z
    .array(
      z.looseObject({
        description: z.string().min(1, "must not be empty").max(10_000),
        priority: z.enum(["must", "should", "could"], { error: "must be one of must, should, could (MoSCoW)" }),
        category: z.string().max(200).optional(),
      }),
      { error: "must be a list of requirements" },
    )
    .min(1, "must have at least one requirement")
    .max(500, "must have at most 500 requirements"),
  input_context: z.looseObject({ references: z.array(taskReference).max(200).optional() }).optional(),
  constraints: z
    .looseObject({
      languages: names.optional(),
      frameworks: names.optional(),
      testing: z.enum(["required", "recommended", "none"]).optional(),
      no_breaking_changes: z.boolean().optional(),
      max_files_changed: z.int().min(0).optional(),
      custom: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  output_expectations: z
    .looseObject({
      contracts: z
        .record(
          contractKey,
          z.looseObject({ description: z.string().min(1).max(10_000), format: z.string().max(200).optional(), required: z.boolean().optional() }),
        )
        .optional(),
      artifacts: z.array(z.string().max(500)).max(200).optional(),
    })
    .optional(),
});
export type TaskSpec = z.infer<typeof taskSpecSchema>;

const count = z.int("must be an integer").min(0, "must not be negative");

/** A contract entry as reported. Entries without `status` are normalised to fulfilled data (see normaliseResult). */
const contractEntry = z
  .looseObject({
    status: z.enum(["fulfilled", "partial", "skipped"], { error: "must be one of fulfilled, partial, skipped" }).optional(),
    data: z.unknown().optional(),
  })
  .superRefine((entry, ctx) => {
    // §2: "skipped — Intentionally not fulfilled. Must provide reason in data." A reason beside data is taken too.
    if (entry.status === "skipped" && !skipReasonOf(entry)) {
      ctx.addIssue({ code: "custom", path: ["reason"], message: "is required when status is skipped: a non-empty reason, in data.reason or beside status" });
    }
  });

/** Why a contract was skipped: `data.reason` (the seed's place) or `reason`. */
export function skipReasonOf(entry: Record<string, unknown>): string | null {
  const data = entry.data;
  const inData = data && typeof data === "object" && !Array.isArray(data) ? (data as Record<string, unknown>).reason : typeof data === "string" ? data : undefined;
  for (const r of [inData, entry.reason]) if (typeof r === "string" && r.trim()) return r;
  return null;
}

/** §2 Result Reporting Format: orchestratia/task-result/v1. */
export const taskResultSchema = z.looseObject({
  $schema: z.string().max(200),
  summary: z.string({ error: "is required: a one-line summary" }).max(10_000),
  changes: z
    .looseObject({
      files_modified: z.array(z.string()).optional(),
      files_created: z.array(z.string()).optional(),
      files_deleted: z.array(z.string()).optional(),
      lines_added: count.optional(),
      lines_removed: count.optional(),
    })
    .optional(),
  contracts: z.record(contractKey, contractEntry).optional(),
  tests: z
    .looseObject({
      framework: z.string().max(200).optional(),
      total: count.optional(),
      passed: count.optional(),
      failed: count.optional(),
      skipped: count.optional(),
      coverage_percent: z.number().min(0).max(100).optional(),
    })
    .optional(),
  artifacts: z.record(z.string(), z.unknown()).optional(),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/** The requirement fields the hub itself knows; any other is matched against the server's same-named capability. */
export const KNOWN_REQUIREMENT_FIELDS = ["$schema", "repo", "languages", "tools", "environments", "tags", "prefer_server", "role", "capabilities"] as const;

/** A value an unknown requirement field may hold: one that can be compared with a capability. */
export const isMatchableValue = (v: unknown): boolean =>
  typeof v === "number" || typeof v === "boolean" || typeof v === "string" || (Array.isArray(v) && v.every((x) => typeof x === "number" || typeof x === "boolean" || typeof x === "string"));

/**
 * §5 Task Requirements Schema (orchestratia/requirements/v1), plus the hub's
 * hard `role` and `capabilities`. Fields the seed does not name are not
 * ignored (compute-protocol.md forbids implicit compatibility): they are
 * matched against the server's capabilities, so they must hold a value that
 * can be compared.
 */
export const requirementsSchema = z
  .looseObject({
    $schema: z.string().max(200).optional(),
    repo: name.optional(),
    languages: names.optional(),
    tools: names.optional(),
    environments: names.optional(),
    tags: names.optional(),
    prefer_server: name.optional(),
    role: name.optional(),
    capabilities: names.optional(),
  })
  .superRefine((req, ctx) => {
    for (const [field, value] of Object.entries(req)) {
      if ((KNOWN_REQUIREMENT_FIELDS as readonly string[]).includes(field) || isMatchableValue(value)) continue;
      ctx.addIssue({
        code: "custom",
        path: [field],
        message: "cannot be matched: an unknown requirement must be a number, boolean, string or list of those, compared with the server's capability of that name",
      });
    }
  });
export type Requirements = z.infer<typeof requirementsSchema>;

export const DEPENDENCY_TYPES = ["blocks", "input", "related"] as const;
export type DependencyType = (typeof DEPENDENCY_TYPES)[number];

/** §3 Dependency Declarations. */
export const dependencySchema = z
  .object({
    depends_on_task_id: z.uuid("must be a task UUID"),
    dependency_type: z.enum(DEPENDENCY_TYPES, { error: "must be one of blocks, input, related" }).default("blocks"),
    contract_key: contractKey.nullish(),
  })
  .superRefine((d, ctx) => {
    if (d.dependency_type === "input" && !d.contract_key) {
      ctx.addIssue({ code: "custom", path: ["contract_key"], message: "is required for an input dependency" });
    }
  });
export type DependencyInput = z.infer<typeof dependencySchema>;
