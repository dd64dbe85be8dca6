/**
 * What the link pushed to its daemon lately, to send again on the daemon's
 * next socket where the hub's state shows it was not acted on. A socket that
 * dies abruptly still looks open to the hub for a while, and what is sent on
 * it then is lost; the daemon acknowledges nothing and types what it
 * receives, so a blind resend would type things twice. Only pushes whose
 * effect the hub can see are sent again, and only while it has not happened:
 *   - `task_assigned` (also how an approved task reaches its session): the
 *     task is still given to that session and not started;
 *   - `intervention_for_session`: the question still waits for its answer.
 * An answer (`intervention_response`), a note or a status update leaves no
 * such mark, so it is not sent again (docs/USING.md says so). A socket the
 * daemon closed itself (1000, 1001) died with nothing in flight.
 */
import type { DaemonPush } from "./pushes";

/** How long before a new socket a push may have been lost on the old one (hub.py notices a silent socket in 40 s; it reconnects in 1 s). */
export const RESEND_WINDOW_MS = 15_000;
/** Pushes remembered at most. */
const MAX_REMEMBERED = 500;

const RESENDABLE = new Set(["task_assigned", "intervention_for_session"]);

export class RecentPushes {
  private sent: { at: number; socket: number; push: DaemonPush }[] = [];

  /** A push went out on the daemon's socket (known by when it connected). */
  note(push: DaemonPush, socket: number, at = Date.now()) {
    if (!RESENDABLE.has(push.type)) return;
    this.sent.push({ at, socket, push });
    if (this.sent.length > MAX_REMEMBERED) this.sent.splice(0, this.sent.length - MAX_REMEMBERED);
  }

  /** The daemon closed that socket itself: what went out on it before had arrived. */
  closedCleanly(socket: number) {
    this.sent = this.sent.filter((s) => s.socket !== socket);
  }

  /** What was sent within the window before `now`, in order, and forgotten. */
  take(now = Date.now()): DaemonPush[] {
    const recent = this.sent.filter((s) => now - s.at <= RESEND_WINDOW_MS).map((s) => s.push);
    this.sent = [];
    return recent;
  }
}

/** Of these pushes, those whose effect has not happened yet, by one read of D1. */
export async function notActedOn(db: D1Database, pushes: DaemonPush[]): Promise<DaemonPush[]> {
  if (pushes.length === 0) return [];
  const taskIds = pushes.filter((p) => p.type !== "intervention_for_session").map((p) => String(p.task_id));
  const questionIds = pushes.filter((p) => p.type === "intervention_for_session").map((p) => String(p.intervention_id));
  const [tasks, questions] = await db.batch<{ id: string; status: string; target_session_id: string | null }>([
    db.prepare("SELECT id, status, target_session_id FROM tasks WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(taskIds)),
    db.prepare("SELECT id, status, target_session_id FROM interventions WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(questionIds)),
  ]);
  const task = new Map(tasks!.results.map((r) => [r.id, r]));
  const question = new Map(questions!.results.map((r) => [r.id, r]));
  return pushes.filter((p) => {
    if (p.type === "intervention_for_session") return question.get(String(p.intervention_id))?.status === "pending";
    const t = task.get(String(p.task_id));
    return t?.status === "assigned" && t.target_session_id === p.session_id;
  });
}
