/** What became of an agent's tool call (the permission log, seeds' hook): shared by the wire format and the store. */
export const PERMISSION_DECISIONS = ["allowed", "denied", "asked"] as const;
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number];

/**
 * Where a permission-log entry came from: the daemon's PreToolUse hook, or the agent's own telemetry (Claude Code's
 * `tool_decision` events) for a session the hook has not logged. One source per session: the hook wins.
 */
export const PERMISSION_SOURCES = ["hook", "telemetry"] as const;
export type PermissionSource = (typeof PERMISSION_SOURCES)[number];
