/** A project's settings: what each means, and its value when never set. */

export interface ProjectSettings {
  /** Tasks created by agents wait for a person's approval before they may be auto-assigned, started or planned. */
  approve_agent_tasks: boolean;
  /** Any agent in the project may run shell commands in another session of the project, and send it files. */
  remote_exec: boolean;
}

export const DEFAULT_PROJECT_SETTINGS: ProjectSettings = { approve_agent_tasks: false, remote_exec: false };

/** The settings as stored (a JSON object, possibly from before a setting existed), each at its default when absent. */
export const projectSettingsOf = (stored: unknown): ProjectSettings => {
  const s = stored !== null && typeof stored === "object" ? (stored as Partial<Record<keyof ProjectSettings, unknown>>) : {};
  return { approve_agent_tasks: s.approve_agent_tasks === true, remote_exec: s.remote_exec === true };
};
