/** The kinds and policies of schedules and triggers (API.md "Templates, schedules and triggers"), named once. */
export const MISSED_POLICIES = ["skip", "run_once"] as const;
export const OVERLAP_POLICIES = ["skip", "allow"] as const;
export const TRIGGER_KINDS = ["http", "github"] as const;
export type TriggerKind = (typeof TRIGGER_KINDS)[number];
