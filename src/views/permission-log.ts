/** The permission log as the hub answers it: what a daemon's post came to, and a project's entries. */
import { z } from "zod";
import { PERMISSION_DECISIONS, PERMISSION_SOURCES } from "../db/schema";
import type { permissionLog } from "../db/schema";
import { id, jsonObject, timestamp } from "./fields";

export const logPostResultSchema = z
  .object({
    accepted: z.int().meta({ description: "Entries stored" }),
    dropped: z.int().meta({
      description: "Well-formed entries left out: their session is not one of the server's, or their project not one it serves (or not the session's)",
    }),
    invalid: z.int().meta({ description: "Entries that are not a log entry as the hook writes it" }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .meta({ description: "What was wrong with the first invalid entries (at most 20), by `entries.<index>.<field>`" }),
  })
  .meta({ id: "PermissionLogPostResult" });

export const permissionEntrySchema = z
  .object({
    id,
    session_id: id.nullable(),
    session_name: z.string().nullable().meta({ description: "The session's name, while the session is known to the hub" }),
    task_id: id.nullable().meta({ description: "The task the session was working on when the entry arrived" }),
    tool_name: z.string(),
    tool_input: jsonObject.meta({ description: "As the hook saw it; when over 8 KiB, its long strings are cut (`tool_input_truncated`)" }),
    tool_input_truncated: z.boolean(),
    decision: z.enum(PERMISSION_DECISIONS),
    matched_rule_id: z.string().nullable().meta({ description: "The rule that decided it; null when none matched (`asked`)" }),
    reason: z.string().nullable(),
    agent_name: z.string().nullable().meta({ description: "claude, codex or gemini, as the hook detected it" }),
    created_at: timestamp.meta({ description: "When the hook saw the call (never later than the hub received it)" }),
    source: z.enum(PERMISSION_SOURCES).meta({
      description:
        "`hook`: the daemon's PreToolUse hook logged it. `telemetry`: Claude Code's `tool_decision` event, for a session the hook has not logged; " +
        "the session's telemetry entries are replaced by the hook's once those arrive",
    }),
  })
  .meta({ id: "PermissionLogEntry" });

export const permissionLogPageSchema = z
  .object({
    entries: z.array(permissionEntrySchema).meta({ description: "Newest first" }),
    next_before: z.string().nullable().meta({ description: "Send as `before` for the next page; null on the last" }),
  })
  .meta({ id: "PermissionLogPage" });

export const permissionEntryView = (row: typeof permissionLog.$inferSelect, sessionName: string | null): z.infer<typeof permissionEntrySchema> => ({
  id: row.id,
  session_id: row.sessionId,
  session_name: sessionName,
  task_id: row.taskId,
  tool_name: row.toolName,
  tool_input: JSON.parse(row.toolInput) as Record<string, unknown>,
  tool_input_truncated: row.toolInputTruncated,
  decision: row.decision,
  matched_rule_id: row.matchedRuleId,
  reason: row.reason,
  agent_name: row.agentName,
  created_at: row.createdAt,
  source: row.source,
});
