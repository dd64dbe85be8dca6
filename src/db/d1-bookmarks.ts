/**
 * D1 bookmarks as the hub passes them between requests: a caller sends back
 * the newest one it was given (`X-D1-Bookmark`), and that request's reads
 * see at least the database that bookmark names. D1 documents bookmarks as
 * lexicographically sortable, oldest to newest, so the newer of two is the
 * greater string.
 */

export const BOOKMARK_HEADER = "X-D1-Bookmark";

/** The longest header taken: D1's bookmarks are 59 characters; the margin allows for a wider format, not for junk. */
export const MAX_BOOKMARK_LENGTH = 128;

/** The shape of D1's bookmarks (`00000001-00000002-00004e2f-0a83…`): hexadecimal fields joined by hyphens. */
const BOOKMARK_PATTERN = /^[0-9a-f]+(?:-[0-9a-f]+)+$/i;

/** Where a session starts when the caller names no bookmark, or names a constraint instead. */
export type SessionStart = "first-primary" | "first-unconstrained";
const CONSTRAINTS: ReadonlySet<string> = new Set<SessionStart>(["first-primary", "first-unconstrained"]);

export type BookmarkHeader = { ok: true; start: string } | { ok: false; message: string };

/**
 * Where a request's D1 session starts, from its `X-D1-Bookmark`: the bookmark, a constraint named instead, or
 * `first-primary` without one (a caller that carries no bookmark still reads its own earlier writes).
 */
export function sessionStartOf(header: string | undefined): BookmarkHeader {
  if (header === undefined || header === "") return { ok: true, start: "first-primary" };
  if (header.length > MAX_BOOKMARK_LENGTH) return { ok: false, message: `is ${header.length} characters long; a D1 bookmark has at most ${MAX_BOOKMARK_LENGTH}` };
  if (CONSTRAINTS.has(header) || BOOKMARK_PATTERN.test(header)) return { ok: true, start: header };
  return { ok: false, message: "must be a bookmark a response of this hub carried (hexadecimal fields joined by hyphens), first-primary or first-unconstrained" };
}

export const isConstraint = (start: string) => CONSTRAINTS.has(start);

/** The newer of two bookmarks (either may be missing). */
export function newerBookmark(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b || null;
  if (!b) return a;
  return b > a ? b : a;
}
