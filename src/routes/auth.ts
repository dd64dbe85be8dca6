/** People's sign-in: bootstrap of the first admin, login, refresh, logout, me. */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { currentUser, person } from "../auth/middleware";
import {
  clearRefreshCookie,
  clearingRefreshCookie,
  readRefreshCookie,
  setRefreshCookie,
  withoutRefreshToken,
} from "../auth/refresh-cookie";
import { DECOY_PASSWORD_HASH, hashPassword, verifyPassword } from "../auth/password";
import { sha256Hex } from "../auth/secrets";
import { issueTokenPair, revokeAllRefreshTokens, revokeRefreshToken, rotateRefreshToken } from "../auth/token-pair";
import { nowIso } from "../db/client";
import { users } from "../db/schema";
import { readJson } from "../http/body";
import type { HubEnv } from "../http/context";
import { Problem, conflict, forbidden, tooManyRequests, unauthorized } from "../http/problem";
import { email, label, password } from "../http/fields";
import { userView } from "../views/people";

export const authRoutes = new Hono<HubEnv>();

const LOGIN_RETRY_AFTER_SECONDS = 60;

authRoutes.post("/bootstrap", async (c) => {
  const presented = c.req.header("Authorization")?.match(/^Bearer\s+(.+)$/i)?.[1] ?? "";
  if (!c.env.BOOTSTRAP_TOKEN) throw forbidden("Bootstrap is disabled: no BOOTSTRAP_TOKEN is configured");
  // Compare digests so the comparison takes the same time whatever the input.
  if ((await sha256Hex(presented)) !== (await sha256Hex(c.env.BOOTSTRAP_TOKEN))) {
    throw unauthorized("Send the bootstrap token as `Authorization: Bearer <BOOTSTRAP_TOKEN>`", "INVALID_BOOTSTRAP_TOKEN");
  }
  const body = await readJson(c, z.object({ email, password, name: label().optional() }));
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
});

authRoutes.post("/login", async (c) => {
  const body = await readJson(c, z.object({ email, password: z.string().max(256), refresh_cookie: z.boolean().optional() }));
  const ip = c.req.header("CF-Connecting-IP") ?? "unknown";
  // Every attempt counts: a correct guess must not get through once a key is throttled.
  const [byEmail, byIp] = await Promise.all([
    c.env.LOGIN_LIMITER.limit({ key: `email:${body.email}` }),
    c.env.LOGIN_LIMITER.limit({ key: `ip:${ip}` }),
  ]);
  if (!byEmail.success || !byIp.success) {
    throw tooManyRequests("Too many sign-in attempts; wait a minute and try again", LOGIN_RETRY_AFTER_SECONDS);
  }
  const user = await c.var.db.query.users.findFirst({ where: (u, { eq }) => eq(u.email, body.email) });
  const ok = await verifyPassword(body.password, user?.passwordHash ?? DECOY_PASSWORD_HASH);
  if (!user || !ok) throw unauthorized("Wrong email or password", "INVALID_CREDENTIALS");
  const pair = await issueTokenPair(c.env, c.var.db, user);
  if (!body.refresh_cookie) return c.json(pair);
  setRefreshCookie(c, pair.refresh_token);
  return c.json(withoutRefreshToken(pair));
});

// Without `refresh_token` in the body, the dashboard's cookie (src/auth/refresh-cookie.ts) is used instead.
const refreshBody = z.object({ refresh_token: z.string().min(1).max(512).optional() });

authRoutes.post("/refresh", async (c) => {
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
});

/** Logging out twice, or with a cookie already gone, is still a logout: unknown tokens are ignored. */
authRoutes.post("/logout", async (c) => {
  const body = await readJson(c, refreshBody);
  if (body.refresh_token) {
    await revokeRefreshToken(c.var.db, body.refresh_token);
    return c.json({ status: "ok" });
  }
  const presented = readRefreshCookie(c);
  if (presented) await revokeRefreshToken(c.var.db, presented);
  clearRefreshCookie(c);
  return c.json({ status: "ok" });
});

authRoutes.get("/me", person(), (c) => c.json(userView(currentUser(c))));

/** Lets a signed-in person change their own password. */
authRoutes.post("/password", person(), async (c) => {
  const user = currentUser(c);
  const body = await readJson(c, z.object({ current_password: z.string().max(256), new_password: password }));
  if (!user.passwordHash || !(await verifyPassword(body.current_password, user.passwordHash))) {
    throw forbidden("The current password is wrong", "INVALID_CREDENTIALS");
  }
  await c.var.db.batch([
    c.var.db
      .update(users)
      .set({ passwordHash: await hashPassword(body.new_password), updatedAt: nowIso() })
      .where(eq(users.id, user.id)),
    revokeAllRefreshTokens(c.var.db, user.id),
  ]);
  return c.json({ status: "ok" });
});
