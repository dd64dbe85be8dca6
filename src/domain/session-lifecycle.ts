/** How an agent session moves on, and which event says so (pure). */
import type { SessionStatus } from "../db/schema";

/** `closed` and `error` are where a session ends. */
export const isFinalSession = (status: string) => status === "closed" || status === "error";
/** `starting` and `running`: the daemon may still be told to do something in it. */
export const isOpenSession = (status: string | undefined) => status === "starting" || status === "running";

export type SessionEventType = "session_started" | "session_closed" | "session_error";

/** The event a change of status makes, if it is one. */
export function sessionEventOf(from: SessionStatus, to: SessionStatus): SessionEventType | null {
  if (from === to) return null;
  switch (to) {
    case "running":
      return "session_started";
    case "closed":
      return "session_closed";
    case "error":
      return "session_error";
    default:
      return null;
  }
}
