/**
 * Failures the hub's own logic reports without knowing who asked: the HTTP
 * layer turns them into problem documents (see `http/problem.ts`).
 */

/** What was asked for does not exist, or no longer does (its project was deleted meanwhile). */
export class NotFound extends Error {
  constructor(readonly what: string) {
    super(`${what} not found`);
    this.name = "NotFound";
  }
}

/** A paging cursor the hub never handed out. */
export class InvalidCursor extends Error {
  constructor() {
    super("cursor: not a cursor this hub returned");
    this.name = "InvalidCursor";
  }
}
