/**
 * The dashboard's refresh token, kept in an HttpOnly cookie so that no script
 * on the page can read it; the access token lives only in the page's memory.
 *
 * Why this needs no CSRF token: the cookie is SameSite=Strict, so a browser
 * never sends it with a request started by another site; it is scoped to
 * /api/v1/auth, so no other endpoint ever sees it; and refresh and logout
 * answer only JSON, which a page of another origin cannot read unless
 * CORS_ORIGINS lists it. A same-site page that is not listed can at most make
 * the browser rotate or drop its own cookie, never learn a token.
 *
 * Beside it goes a hint the page can read, `orc_signed_in=1`, with the same
 * lifetime and no secret in it: a page opened cold asks for a refresh only
 * when the hint says there is a cookie to spend, rather than being refused
 * (a 401 the browser logs on every visit before signing in).
 */
import type { Context } from "hono";
import { deleteCookie, generateCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import { Problem } from "../http/problem";
import { REFRESH_TOKEN_TTL_MS } from "./token-pair";

export const REFRESH_COOKIE = "orc_refresh";
/** Readable by the page (web/src/api.ts): says a refresh cookie was set, nothing more. */
export const SIGNED_IN_HINT = "orc_signed_in";

const ATTRIBUTES = { path: "/api/v1/auth", httpOnly: true, secure: true, sameSite: "Strict" } satisfies CookieOptions;
const HINT_ATTRIBUTES = { path: "/", secure: true, sameSite: "Strict" } satisfies CookieOptions;

/** Same lifetime as the token itself: rotation issues a fresh token and a fresh cookie (and hint) together. */
export function setRefreshCookie(c: Context, token: string) {
  const maxAge = REFRESH_TOKEN_TTL_MS / 1000;
  setCookie(c, REFRESH_COOKIE, token, { ...ATTRIBUTES, maxAge });
  setCookie(c, SIGNED_IN_HINT, "1", { ...HINT_ATTRIBUTES, maxAge });
}

export const readRefreshCookie = (c: Context): string | undefined => getCookie(c, REFRESH_COOKIE) || undefined;

export function clearRefreshCookie(c: Context) {
  deleteCookie(c, REFRESH_COOKIE, ATTRIBUTES);
  deleteCookie(c, SIGNED_IN_HINT, HINT_ATTRIBUTES);
}

/**
 * The same refusal, also telling the browser to drop the cookie it sent. The
 * header rides on the problem because a thrown error's response does not keep
 * headers set on the context; a problem carries one Set-Cookie, so the page
 * drops the hint itself on a refusal.
 */
export const clearingRefreshCookie = (p: Problem) =>
  new Problem(
    p.status,
    p.code,
    p.detail,
    p.errors,
    { ...p.headers, "Set-Cookie": generateCookie(REFRESH_COOKIE, "", { ...ATTRIBUTES, maxAge: 0 }) },
    p.extensions,
  );

/** The token body the dashboard gets: everything but the refresh token, which went into the cookie. */
export function withoutRefreshToken<T extends { refresh_token: string }>(pair: T): Omit<T, "refresh_token"> {
  const { refresh_token: _, ...rest } = pair;
  return rest;
}
