/**
 * One line of the permission log a daemon's PreToolUse hook writes (agent-skills/hooks/orchestratia-pretooluse.sh)
 * and hub.py's `permlog_flush_loop` posts as it is: `{session_id, project_id, tool_name, tool_input, decision,
 * matched_rule_id, reason, agent_name, created_at}`.
 */
import { z } from "zod";
import { PERMISSION_DECISIONS } from "../domain/permission-decisions";
import { cutText } from "../domain/text";

/** The hook's `time.strftime('%Y-%m-%dT%H:%M:%S+00:00')`, or any ISO-8601 time with its offset (Z or ±hh:mm). */
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

const orNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? null);

export const permissionEntrySchema = z.object({
  session_id: orNull(z.uuid("must be a UUID")),
  project_id: orNull(z.uuid("must be a UUID")),
  tool_name: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters"),
  tool_input: z.record(z.string(), z.unknown(), { error: "must be a JSON object" }).default({}),
  decision: z.enum(PERMISSION_DECISIONS, { error: `must be one of ${PERMISSION_DECISIONS.join(", ")}` }),
  matched_rule_id: orNull(z.string().max(200, "must be at most 200 characters")),
  // A rule's name is in it; a long one is cut rather than losing the entry.
  reason: orNull(z.string().transform((r) => cutText(r, 1000, "…"))),
  agent_name: orNull(z.string().max(50, "must be at most 50 characters")),
  created_at: z
    .string()
    .regex(ISO_WITH_OFFSET, { message: "must be an ISO-8601 time with its offset, like 2026-11-26T03:00:00+00:00", abort: true })
    .refine((t) => !Number.isNaN(Date.parse(t)), "must be a real date and time")
    .transform((t) => new Date(t).toISOString()),
});

export type PermissionEntry = z.output<typeof permissionEntrySchema>;

/** Most entries one post may carry: a daemon posts what its machine's sessions logged in 5 s. */
export const MAX_ENTRIES_PER_POST = 10_000;

export const permissionLogPost = z.object({
  entries: z
    .array(z.unknown())
    .max(MAX_ENTRIES_PER_POST, `must hold at most ${MAX_ENTRIES_PER_POST} entries; post the rest in another request`)
    .meta({ description: "The hook's log lines; each is checked on its own (see the response's `invalid`)" }),
});
