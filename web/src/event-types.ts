/**
 * Every kind of event a project's log holds, as webhooks may pick them: a copy
 * of the hub's list (src/room/statements.ts EVENT_TYPES), which refuses any
 * other; the browser tests check the two agree.
 */
export const EVENT_TYPES = [
  "task_created",
  "task_updated",
  "schema_warning",
  "task_assigned",
  "task_started",
  "plan_submitted",
  "plan_approved",
  "plan_revision_requested",
  "task_progress",
  "task_completed",
  "contract_fulfilled",
  "contract_partial",
  "contract_skipped",
  "contract_missing",
  "task_unblocked",
  "task_failed",
  "task_cancelled",
  "task_retried",
  "dependency_added",
  "dependency_removed",
  "dependency_failed",
  "intervention_requested",
  "intervention_responded",
  "intervention_timed_out",
  "note_added",
  "agent_error",
  "server_online",
  "server_offline",
  "session_created",
  "session_started",
  "session_closed",
  "session_error",
  "session_mcp_status",
  "webhook_disabled",
  "task_rejected",
  "task_requeued",
  "late_result_received",
  "task_awaiting_approval",
  "task_approved",
  "project_settings_changed",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
