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
 */
import type { Context } from "hono";
import { deleteCookie, generateCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";
import { Problem } from "../http/problem";
import { REFRESH_TOKEN_TTL_MS } from "./token-pair";

export const REFRESH_COOKIE = "orc_refresh";

const ATTRIBUTES = { path: "/api/v1/auth", httpOnly: true, secure: true, sameSite: "Strict" } satisfies CookieOptions;

/** Same lifetime as the token itself: rotation issues a fresh token and a fresh cookie together. */
export const setRefreshCookie = (c: Context, token: string) =>
  setCookie(c, REFRESH_COOKIE, token, { ...ATTRIBUTES, maxAge: REFRESH_TOKEN_TTL_MS / 1000 });

export const readRefreshCookie = (c: Context): string | undefined => getCookie(c, REFRESH_COOKIE) || undefined;

export const clearRefreshCookie = (c: Context) => void deleteCookie(c, REFRESH_COOKIE, ATTRIBUTES);

/**
 * The same refusal, also telling the browser to drop the cookie it sent. The
 * header rides on the problem because a thrown error's response does not keep
 * headers set on the context.
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
