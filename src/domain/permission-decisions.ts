/** What became of an agent's tool call (the permission log, seeds' hook): shared by the wire format and the store. */
export const PERMISSION_DECISIONS = ["allowed", "denied", "asked"] as const;
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number];
