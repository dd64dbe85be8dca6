/**
 * A Worker request's D1 session (the Sessions API): its statements run in it,
 * so with read replication on they may be served by a nearby replica, but
 * never by one older than the bookmark the session started from.
 */
import { isConstraint, newerBookmark } from "./d1-bookmarks";

export class RequestSession {
  private session: D1DatabaseSession;
  /** The newest bookmark known to this request that its session may not report (one it started from, or the room's). */
  private known: string | null;

  constructor(
    readonly binding: D1Database,
    start: string,
  ) {
    this.session = binding.withSession(start);
    this.known = isConstraint(start) ? null : start;
  }

  /** Where the request's statements go now. */
  get current(): D1DatabaseSession {
    return this.session;
  }

  /**
   * Another writer (the project's room) committed at `bookmark` for this request: later reads in it must see that
   * write, so they go to a session starting there. A session cannot be moved forward, only replaced.
   */
  caughtUpTo(bookmark: string | null | undefined) {
    const now = this.bookmark();
    if (!bookmark || newerBookmark(now, bookmark) === now) return;
    this.session = this.binding.withSession(bookmark);
    this.known = bookmark;
  }

  /** The newest bookmark of the request: what the caller sends back to read at least what it saw and wrote here. */
  bookmark(): string | null {
    return newerBookmark(this.known, this.session.getBookmark());
  }
}
