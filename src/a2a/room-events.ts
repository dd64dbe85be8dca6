/**
 * A project's events as the Worker hears them, for one A2A stream: the room's dashboard socket opened as the caller,
 * resumed after a seq, so every event after it arrives once and in order (the room replays the gap between operations).
 */
import type { Db } from "../db/client";
import { taskViewsInBatch } from "../views/task-queries";
import type { TaskView } from "../views/tasks";
import { roomStub } from "../room/client";
import type { CommittedEvent } from "../room/statements";
import type { WorkerEnv } from "../runtime/worker-env";

/**
 * A task as it is, and the project's newest event when it was read, in one transaction: every event after that seq
 * changed the task after this view of it, and none before it did.
 */
export async function snapshotOf(db: Db, d1: D1Database, projectId: string, taskId: string): Promise<{ task: TaskView | undefined; since: number }> {
  const view = taskViewsInBatch(db, d1, [taskId]);
  const [head, tasks] = await d1.batch([d1.prepare("SELECT COALESCE(MAX(seq), 0) AS head FROM events WHERE project_id = ?1").bind(projectId), view.statement]);
  return { task: view.read(tasks!)[0], since: (head!.results[0] as { head: number }).head };
}

/** Who the room's socket is opened as, and until when (the room closes it then; the client subscribes again). */
export interface Listener {
  roomUserId: string;
  expiresAt: number;
}

/** A queue between the socket's callbacks and the stream reading it. */
class Inbox<T> {
  private items: T[] = [];
  private waiting: ((v: IteratorResult<T>) => void) | null = null;
  private ended = false;

  push(item: T) {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: item, done: false });
    } else this.items.push(item);
  }

  end() {
    this.ended = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }
}

type Frame = { type: "event"; event_type: string } & Omit<CommittedEvent, "type">;

/**
 * The project's events after `since`, ending when the room closes the socket or `stop` is aborted (a reader waiting for
 * the next event is then let go at once). A socket told to resync (more than the room replays were missed) resumes
 * from the newest event: the reader reads the task afresh.
 */
export async function* eventsAfter(
  env: WorkerEnv,
  projectId: string,
  since: number,
  who: Listener,
  stop: AbortSignal,
): AsyncGenerator<CommittedEvent & { resynced?: true }> {
  if (stop.aborted) return;
  const answer = await roomStub(env, projectId).fetch("https://room/dashboard", {
    headers: {
      Upgrade: "websocket",
      "X-User-Id": who.roomUserId,
      "X-Token-Expires": String(Math.floor(who.expiresAt / 1000)),
      "X-Resume-Since": String(since),
    },
  });
  const ws = answer.webSocket;
  if (!ws) throw new Error(`the project's room answered ${answer.status} to a stream`);
  const inbox = new Inbox<Frame | { type: "resync_required"; head: number | null }>();
  ws.accept();
  ws.addEventListener("message", (e) => {
    const frame = JSON.parse(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data)) as { type: string };
    if (frame.type === "event" || frame.type === "resync_required") inbox.push(frame as Frame);
  });
  ws.addEventListener("close", () => inbox.end());
  ws.addEventListener("error", () => inbox.end());
  stop.addEventListener("abort", () => inbox.end());
  // Aborted while the room was being reached: the listener above came too late to hear it.
  if (stop.aborted) inbox.end();
  try {
    for (;;) {
      const { value, done } = await inbox.next();
      if (done) return;
      if (value.type === "resync_required") {
        const head = (value as { head: number | null }).head ?? since;
        ws.send(JSON.stringify({ type: "resume", since: head }));
        yield {
          project_id: projectId,
          seq: head,
          type: "task_updated",
          task_id: null,
          actor: "hub",
          data: {},
          traceparent: null,
          created_at: "",
          resynced: true,
        };
        continue;
      }
      const { event_type, type: _frame, ...event } = value as Frame;
      yield { ...event, type: event_type as CommittedEvent["type"] };
    }
  } finally {
    try {
      ws.close(1000, "stream ended");
    } catch {
      // Already closed by the room.
    }
  }
}
