/**
 * Requests handed to a daemon and not answered yet, by request id: the
 * daemon's answer (`remote_exec_result`, `fs_*_result`) names the request it
 * answers, and each caller waits for its own, or until its deadline, or until
 * the daemon leaves.
 */
export type Waited<A> = { kind: "answered"; answer: A } | { kind: "gone" } | { kind: "timed_out" };

export class PendingRequests<A> {
  private readonly waiting = new Map<string, { settle: (outcome: Waited<A>) => void; timer: ReturnType<typeof setTimeout> }>();

  /** The request's outcome: its answer, or `timed_out` after `timeoutMs`. */
  wait(requestId: string, timeoutMs: number): Promise<Waited<A>> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(requestId, { kind: "timed_out" }), timeoutMs);
      this.waiting.set(requestId, { settle: resolve, timer });
    });
  }

  /** An answer came: false when nothing waits for it (late, or not asked for). */
  answered(requestId: unknown, answer: A): boolean {
    return typeof requestId === "string" && this.settle(requestId, { kind: "answered", answer });
  }

  /** The daemon left: what it was asked will not be answered. */
  daemonGone() {
    for (const requestId of [...this.waiting.keys()]) this.settle(requestId, { kind: "gone" });
  }

  private settle(requestId: string, outcome: Waited<A>): boolean {
    const pending = this.waiting.get(requestId);
    if (!pending) return false;
    this.waiting.delete(requestId);
    clearTimeout(pending.timer);
    pending.settle(outcome);
    return true;
  }
}
