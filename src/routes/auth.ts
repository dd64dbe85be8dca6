/** People's sign-in: bootstrap of the first admin, login, refresh, logout, me. */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { assertActive, currentUser, person, signedInPerson } from "../middleware/guards";
import { clearRefreshCookie, clearingRefreshCookie, readRefreshCookie, setRefreshCookie, withoutRefreshToken } from "../auth/refresh-cookie";
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from "../auth/password";
import { sha256Hex } from "../auth/secrets";
import { issueTokenPair, revokeAllRefreshTokens, revokeRefreshToken, rotateRefreshToken } from "../auth/token-pair";
import { nowIso } from "../db/client";
import { endClientGrantsOf } from "../mcp/client-grants";
import { dropLibraryGrantsOf } from "../mcp/grant-revocation";
import { users } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { Problem, conflict, forbidden, tooManyRequests, unauthorized } from "../http/problem";
import { email, label, password } from "../http/fields";
import { documented } from "../openapi/operation";
import { cookieTokenPairSchema, okSchema, tokenPairSchema, userSchema, userView } from "../views/people";

export const authRoutes = new Hono<HubEnv>();

const LOGIN_RETRY_AFTER_SECONDS = 60;

/**
 * Counts a password guess against each key (LOGIN_LIMITER: 10 a minute per key); 429 once any is spent. Every attempt
 * counts, so a correct guess does not get through once a key is throttled. The client address's key is shared by
 * sign-ins and password changes: guesses from one address count together, whichever door they try.
 */
export async function throttleGuesses(c: HubContext, keys: string[], what: string) {
  const ip = c.req.header("CF-Connecting-IP") ?? "unknown";
  const outcomes = await Promise.all([...keys, `ip:${ip}`].map((key) => c.env.LOGIN_LIMITER.limit({ key })));
  if (outcomes.some((o) => !o.success)) throw tooManyRequests(`Too many ${what}; wait a minute and try again`, LOGIN_RETRY_AFTER_SECONDS);
}

/** The person whose email and password these are (each attempt throttled); 401 `INVALID_CREDENTIALS` alike for either wrong. */
export async function signInWithPassword(c: HubContext, address: string, presented: string) {
  await throttleGuesses(c, [`email:${address}`], "sign-in attempts");
  const user = await c.var.db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, address) });
  const ok = await verifyPassword(presented, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  if (!user || !ok) throw unauthorized("Wrong email or password", "INVALID_CREDENTIALS");
  // Said only to whoever knows the password.
  assertActive(user);
  return user;
}

export const refreshCookieField = z
  .boolean()
  .optional()
  .meta({ description: "The dashboard's: put the refresh token in an HttpOnly cookie instead of the body" });

const bootstrapBody = z.object({ email, password, name: label().optional() });
const loginBody = z.object({
  email,
  password: z.string().max(256),
  refresh_cookie: refreshCookieField,
});
const passwordChange = z.object({ current_password: z.string().max(256), new_password: password });

/** Sign-in answers: the pair, or without its refresh token when that went into the cookie. */
export const signedIn = z.union([tokenPairSchema, cookieTokenPairSchema]);
export const REFRESH_COOKIE_HEADER =
  "`orc_refresh=<token>` (HttpOnly, Secure, SameSite=Strict, Path=/api/v1/auth) and `orc_signed_in=1` (Secure, SameSite=Strict, Path=/, " +
  "readable by the page: a hint that there is a cookie to refresh with): only when the refresh token went into the cookie";

/** Answers a sign-in: the pair, or (`cookie`) the pair without its refresh token, which goes into the dashboard's cookie. */
export function answerSignIn(c: HubContext, pair: z.infer<typeof tokenPairSchema>, cookie: boolean | undefined, status: 200 | 201 = 200) {
  if (!cookie) return c.json(pair, status);
  setRefreshCookie(c, pair.refresh_token);
  return c.json(withoutRefreshToken(pair), status);
}

authRoutes.post(
  "/bootstrap",
  documented({
    id: "bootstrap",
    tag: "Auth",
    summary: "Create the first admin",
    description:
      "Create the first admin (with the BOOTSTRAP_TOKEN secret) and sign them in.\n\n" +
      "Only while the hub has no users: 409 `ALREADY_BOOTSTRAPPED` once any user exists (of concurrent calls exactly one succeeds). " +
      "403 when no `BOOTSTRAP_TOKEN` is configured; 401 `INVALID_BOOTSTRAP_TOKEN` for a wrong one.",
    caller: "bootstrap",
    body: bootstrapBody,
    responses: { 201: tokenPairSchema },
  }),
  async (c) => {
    const presented = c.req.header("Authorization")?.match(/^Bearer\s+(.+)$/i)?.[1] ?? "";
    if (!c.env.BOOTSTRAP_TOKEN) throw forbidden("Bootstrap is disabled: no BOOTSTRAP_TOKEN is configured");
    // Compare digests so the comparison takes the same time whatever the input.
    if ((await sha256Hex(presented)) !== (await sha256Hex(c.env.BOOTSTRAP_TOKEN))) {
      throw unauthorized("Send the bootstrap token as `Authorization: Bearer <BOOTSTRAP_TOKEN>`", "INVALID_BOOTSTRAP_TOKEN");
    }
    const body = await readJson(c, bootstrapBody);
    const id = crypto.randomUUID();
    const now = nowIso();
    // One statement: of concurrent bootstraps, exactly one finds the table empty.
    const created = await c.env.DB.prepare(
      `INSERT INTO users (id, email, name, role, password_hash, created_at, updated_at)
     SELECT ?1, ?2, ?3, 'admin', ?4, ?5, ?5 WHERE NOT EXISTS (SELECT 1 FROM users)`,
    )
      .bind(id, body.email, body.name ?? null, await hashPassword(body.password), now)
      .run();
    if (created.meta.changes === 0) throw conflict("The hub already has users; sign in instead", "ALREADY_BOOTSTRAPPED");
    const user = (await c.var.db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, id) }))!;
    return c.json(await issueTokenPair(c.env, c.var.db, user), 201);
  },
);

authRoutes.post(
  "/login",
  documented({
    id: "login",
    tag: "Auth",
    summary: "Sign in with email and password",
    description:
      "Answers an access token (15 minutes) and a refresh token. With `refresh_cookie: true` the refresh token is set as an HttpOnly cookie " +
      "and left out of the body (the dashboard's way). 401 `INVALID_CREDENTIALS` for a wrong email or password (alike); 401 " +
      "`ACCOUNT_DEACTIVATED` for the right password of an account an admin deactivated; " +
      "429 with `Retry-After` after too many attempts for the email or from the address.",
    caller: "anyone",
    body: loginBody,
    responses: { 200: { description: "Signed in", schema: signedIn, headers: { "Set-Cookie": REFRESH_COOKIE_HEADER } } },
  }),
  async (c) => {
    const body = await readJson(c, loginBody);
    const user = await signInWithPassword(c, body.email, body.password);
    return answerSignIn(c, await issueTokenPair(c.env, c.var.db, user), body.refresh_cookie);
  },
);

// Without `refresh_token` in the body, the dashboard's cookie (src/auth/refresh-cookie.ts) is used instead.
const refreshBody = z.object({
  refresh_token: z.string().min(1).max(512).optional().meta({ description: "Left out: the `orc_refresh` cookie's token is used" }),
});

authRoutes.post(
  "/refresh",
  documented({
    id: "refreshTokens",
    tag: "Auth",
    summary: "Refresh tokens",
    description:
      "Spend a refresh token for a new token pair.\n\n" +
      "Refresh tokens rotate: each works once. Presenting one already spent means it leaked: every token of that sign-in is revoked " +
      "(401 `REFRESH_TOKEN_REUSED`); 401 `ACCOUNT_DEACTIVATED` once an admin deactivated the account. Without `refresh_token` in the body the " +
      "`orc_refresh` cookie is used, and the new refresh token " +
      "goes into the cookie again (not the body); a refused cookie is cleared.",
    caller: "anyone",
    body: refreshBody,
    bodyRequired: false,
    headers: { Cookie: "`orc_refresh=<token>`, when the body has no `refresh_token`" },
    responses: { 200: { description: "A new token pair", schema: signedIn, headers: { "Set-Cookie": REFRESH_COOKIE_HEADER } } },
  }),
  async (c) => {
    const body = await readJson(c, refreshBody);
    if (body.refresh_token) return c.json(await rotateRefreshToken(c.env, c.var.db, body.refresh_token));
    const presented = readRefreshCookie(c);
    if (!presented) throw unauthorized("Send `refresh_token` in the body or sign in with `refresh_cookie`", "INVALID_REFRESH_TOKEN");
    try {
      const pair = await rotateRefreshToken(c.env, c.var.db, presented);
      setRefreshCookie(c, pair.refresh_token);
      return c.json(withoutRefreshToken(pair));
    } catch (err) {
      // A refused token is dropped from the browser; a failure of the hub's own leaves the cookie for a retry.
      if (err instanceof Problem && err.status === 401) throw clearingRefreshCookie(err);
      throw err;
    }
  },
);

/** Logging out twice, or with a cookie already gone, is still a logout: unknown tokens are ignored. */
authRoutes.post(
  "/logout",
  documented({
    id: "logout",
    tag: "Auth",
    summary: "Sign out",
    description:
      "Sign out: the refresh token (and every token rotated from the same sign-in) stops working.\n\n" +
      "Unknown or already revoked tokens are ignored, so logging out twice is still a logout. Without `refresh_token` in the body the " +
      "`orc_refresh` cookie's token is revoked and the cookie cleared. Access tokens already issued run out on their own (15 minutes).",
    caller: "anyone",
    body: refreshBody,
    bodyRequired: false,
    headers: { Cookie: "`orc_refresh=<token>`, when the body has no `refresh_token`" },
    responses: {
      200: {
        description: "Signed out",
        schema: okSchema,
        headers: { "Set-Cookie": "Clears `orc_refresh` and `orc_signed_in`, when the body had no `refresh_token`" },
      },
    },
  }),
  async (c) => {
    const body = await readJson(c, refreshBody);
    if (body.refresh_token) {
      await revokeRefreshToken(c.var.db, body.refresh_token);
      return c.json({ status: "ok" });
    }
    const presented = readRefreshCookie(c);
    if (presented) await revokeRefreshToken(c.var.db, presented);
    clearRefreshCookie(c);
    return c.json({ status: "ok" });
  },
);

authRoutes.get(
  "/me",
  documented({ id: "getMe", tag: "Auth", summary: "The signed-in person", caller: "person", responses: { 200: userSchema } }),
  person(),
  (c) => c.json(userView(currentUser(c))),
);

/** Lets a signed-in person change their own password. */
authRoutes.post(
  "/password",
  documented({
    id: "changePassword",
    tag: "Auth",
    summary: "Change one's own password",
    description:
      "403 `INVALID_CREDENTIALS` when `current_password` is wrong; 429 with `Retry-After` after too many attempts for the person or from the address " +
      "(counted with sign-ins from it). Every refresh token of the person is revoked: other sign-ins end when their access token runs out. " +
      "Every MCP client the person authorised (OAuth) is revoked at once: its tokens are refused on `/mcp` and at the token endpoint. " +
      "Personal access tokens stay (each is revoked on its own); one cannot change the password (403 `PERSONAL_TOKEN_NOT_ACCEPTED`).",
    caller: "person",
    body: passwordChange,
    responses: { 200: okSchema },
  }),
  signedInPerson(),
  async (c) => {
    const user = currentUser(c);
    const body = await readJson(c, passwordChange);
    await throttleGuesses(c, [`password:${user.id}`], "password changes");
    if (!user.passwordHash || !(await verifyPassword(body.current_password, user.passwordHash))) {
      throw forbidden("The current password is wrong", "INVALID_CREDENTIALS");
    }
    await c.var.db.batch([
      c.var.db
        .update(users)
        .set({ passwordHash: await hashPassword(body.new_password), updatedAt: nowIso() })
        .where(eq(users.id, user.id)),
      revokeAllRefreshTokens(c.var.db, user.id),
      endClientGrantsOf(c.var.db, user.id),
    ]);
    await dropLibraryGrantsOf(c, user.id);
    return c.json({ status: "ok" });
  },
);
