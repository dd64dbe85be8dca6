/** A project's settings: what each means, and its value when never set. */

export const STALL_ACTIONS = ["alert", "needs_human"] as const;
export type StallAction = (typeof STALL_ACTIONS)[number];

/** The longest a liveness rule may wait, in minutes (a day). */
export const MAX_LIVENESS_MINUTES = 1440;

export interface ProjectSettings {
  /** Tasks created by agents wait for a person's approval before they may be auto-assigned, started or planned. */
  approve_agent_tasks: boolean;
  /** Any agent in the project may run shell commands in another session of the project, and send it files. */
  remote_exec: boolean;
  /** A completion without a summary or a contract goes to needs_human instead of done. */
  require_result: boolean;
  /** A running task silent this many minutes raises task_stalled; null: never. */
  stall_minutes: number | null;
  /** What a stall does besides its event: only alert, or also move the task to needs_human. */
  stall_action: StallAction;
  /** A waiting task no server can take this many minutes raises task_unassignable; null: never. */
  unassignable_minutes: number | null;
  /** Finished tasks (with their events and the rest), the permission log and deliveries older than this many days leave D1 for R2; null: never. */
  archive_after_days: number | null;
}

export const DEFAULT_PROJECT_SETTINGS: ProjectSettings = {
  approve_agent_tasks: false,
  remote_exec: false,
  require_result: false,
  stall_minutes: null,
  stall_action: "alert",
  unassignable_minutes: null,
  archive_after_days: 30,
};

/** The longest archive_after_days (ten years). */
export const MAX_ARCHIVE_DAYS = 3650;

/** Absent (a project from before the setting): the default; null: off. */
const archiveDaysOf = (s: Record<string, unknown>) =>
  !("archive_after_days" in s)
    ? DEFAULT_PROJECT_SETTINGS.archive_after_days
    : typeof s.archive_after_days === "number" &&
        Number.isInteger(s.archive_after_days) &&
        s.archive_after_days >= 1 &&
        s.archive_after_days <= MAX_ARCHIVE_DAYS
      ? s.archive_after_days
      : null;

const minutesOf = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_LIVENESS_MINUTES ? v : null);

/** The settings as stored (a JSON object, possibly from before a setting existed), each at its default when absent. */
export const projectSettingsOf = (stored: unknown): ProjectSettings => {
  const s = stored !== null && typeof stored === "object" ? (stored as Partial<Record<keyof ProjectSettings, unknown>>) : {};
  return {
    approve_agent_tasks: s.approve_agent_tasks === true,
    remote_exec: s.remote_exec === true,
    require_result: s.require_result === true,
    stall_minutes: minutesOf(s.stall_minutes),
    stall_action: s.stall_action === "needs_human" ? "needs_human" : "alert",
    unassignable_minutes: minutesOf(s.unassignable_minutes),
    archive_after_days: archiveDaysOf(s),
  };
};
