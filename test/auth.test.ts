import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokenUntil, ADMIN, BOOTSTRAP_TOKEN, call, createUser, expectProblem, login } from "./helpers";

const secret = new TextEncoder().encode(env.JWT_SECRET);
const claims = (sub: string) => new SignJWT({ role: "admin" }).setSubject(sub).setIssuedAt();

let adminId: string;

describe("bootstrap", () => {
  it("refuses a wrong bootstrap token", async () => {
    expectProblem(await call("/api/v1/auth/bootstrap", { body: ADMIN, token: "nope" }), 401, "INVALID_BOOTSTRAP_TOKEN");
  });

  it("lets exactly one of many concurrent bootstraps win", async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call("/api/v1/auth/bootstrap", { token: BOOTSTRAP_TOKEN, body: { ...ADMIN, name: `racer ${i}` } }),
      ),
    );
    const won = replies.filter((r) => r.status === 201);
    expect(won).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectProblem(r, 409, "ALREADY_BOOTSTRAPPED");
    const { count } = (await env.DB.prepare("SELECT count(*) AS count FROM users").first<{ count: number }>())!;
    expect(count).toBe(1);
    expect(won[0]!.json).toMatchObject({ token_type: "bearer", expires_in: 900, user: { role: "admin" } });
    adminId = won[0]!.json.user.id;
  });
});

describe("login", () => {
  it("stores only a scrypt hash of the password", async () => {
    const row = await env.DB.prepare("SELECT password_hash FROM users").first<{ password_hash: string }>();
    expect(row!.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(row!.password_hash).not.toContain(ADMIN.password);
  });

  it("signs in with the right password and answers the same for a wrong password and an unknown email", async () => {
    const good = await login(ADMIN.email, ADMIN.password);
    expect(good.status).toBe(200);
    expect(good.json).toMatchObject({ token_type: "bearer", user: { email: ADMIN.email } });

    const wrongPassword = await login(ADMIN.email, "not-the-password");
    const unknownEmail = await login("nobody@example.com", "not-the-password");
    expectProblem(wrongPassword, 401, "INVALID_CREDENTIALS");
    expect(unknownEmail.status).toBe(wrongPassword.status);
    expect(unknownEmail.json).toEqual(wrongPassword.json);
  });

  it("validates the body with field errors", async () => {
    const reply = await call("/api/v1/auth/login", { body: { email: "not-an-email", password: 12 } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["email", "password"]);
  });

  it("throttles repeated attempts per email and per client address", async () => {
    const target = "throttled@example.com";
    await clearOfWindowEdge();
    const replies = [];
    for (let i = 0; i < 12; i++) replies.push(await login(target, "wrong-password"));
    expect(replies.slice(0, 10).every((r) => r.status === 401)).toBe(true);
    expectProblem(replies[11]!, 429, "RATE_LIMITED");
    expect(replies[11]!.headers.get("Retry-After")).toBe("60");

    const ip = { "CF-Connecting-IP": "203.0.113.9" };
    await clearOfWindowEdge();
    const byIp = [];
    for (let i = 0; i < 12; i++) {
      byIp.push(await call("/api/v1/auth/login", { body: { email: `ip-${i}@example.com`, password: "x" }, headers: ip }));
    }
    expect(byIp.at(-1)!.status).toBe(429);
  });
});

/**
 * The local rate limiter counts in windows aligned to the wall clock's
 * minutes: attempts that straddle a minute start counting again. Waits out
 * the last seconds of a minute so that a run of attempts falls in one window.
 */
async function clearOfWindowEdge(margin = 5_000) {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < margin) await new Promise((r) => setTimeout(r, left + 100));
}

describe("tokens", () => {
  let userId: string;
  beforeAll(async () => {
    const row = await env.DB.prepare("SELECT id FROM users WHERE role = 'admin'").first<{ id: string }>();
    userId = row!.id;
  });

  async function adminSession() {
    const signIn = await login(ADMIN.email, ADMIN.password);
    expect(signIn.status, signIn.text).toBe(200);
    return signIn.json;
  }

  it("answers /me for a valid access token", async () => {
    const session = await adminSession();
    const me = await call("/api/v1/auth/me", { token: session.access_token });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ id: userId, email: ADMIN.email, role: "admin" });
  });

  it("rotates refresh tokens and revokes the family when a rotated one is reused", async () => {
    const first = await adminSession();
    const second = await call("/api/v1/auth/refresh", { body: { refresh_token: first.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.json.refresh_token).not.toBe(first.refresh_token);
    const third = await call("/api/v1/auth/refresh", { body: { refresh_token: second.json.refresh_token } });
    expect(third.status).toBe(200);

    // The first token was already spent: presenting it again is theft, and kills the family.
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: first.refresh_token } }), 401, "REFRESH_TOKEN_REUSED");
    expectProblem(
      await call("/api/v1/auth/refresh", { body: { refresh_token: third.json.refresh_token } }),
      401,
      "INVALID_REFRESH_TOKEN",
    );
    // Another sign-in's family is untouched.
    const other = await adminSession();
    expect((await call("/api/v1/auth/refresh", { body: { refresh_token: other.refresh_token } })).status).toBe(200);
  });

  it("lets only one of concurrent refreshes with the same token through", async () => {
    const session = await adminSession();
    const replies = await Promise.all(
      Array.from({ length: 10 }, () => call("/api/v1/auth/refresh", { body: { refresh_token: session.refresh_token } })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it("signs out by revoking the refresh token's family", async () => {
    const session = await adminSession();
    expect((await call("/api/v1/auth/logout", { body: { refresh_token: session.refresh_token } })).status).toBe(200);
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: session.refresh_token } }), 401, "INVALID_REFRESH_TOKEN");
  });

  it("refuses expired, tampered, wrong-algorithm, wrong-audience and wrong-issuer tokens", async () => {
    const base = () => claims(userId).setIssuer(env.JWT_ISSUER).setAudience(env.JWT_AUDIENCE);
    const valid = await base().setProtectedHeader({ alg: "HS256" }).setExpirationTime("5m").sign(secret);
    expect((await call("/api/v1/auth/me", { token: valid })).status).toBe(200);

    const expired = await base()
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(secret);
    const [h, p, s] = valid.split(".");
    const payload = JSON.parse(atob(p!.replaceAll("-", "+").replaceAll("_", "/")));
    const forged = btoa(JSON.stringify({ ...payload, role: "admin", sub: crypto.randomUUID() }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    const tampered = `${h}.${forged}.${s}`;
    const hs512 = await base().setProtectedHeader({ alg: "HS512" }).setExpirationTime("5m").sign(secret);
    const unsigned = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" })).replace(/=+$/, "")}.${p}.`;
    const wrongAudience = await claims(userId)
      .setIssuer(env.JWT_ISSUER)
      .setAudience("someone-else")
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(secret);
    const wrongIssuer = await claims(userId)
      .setIssuer("evil")
      .setAudience(env.JWT_AUDIENCE)
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(secret);
    const otherSecret = await base()
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("another-secret-another-secret-another"));

    const cases = { expired, tampered, hs512, unsigned, wrongAudience, wrongIssuer, otherSecret, garbage: "not.a.jwt" };
    for (const [name, token] of Object.entries(cases)) {
      const reply = await call("/api/v1/auth/me", { token });
      expect({ name, status: reply.status }).toEqual({ name, status: 401 });
      expect(reply.json.code).toBe("INVALID_TOKEN");
      expect(reply.headers.get("WWW-Authenticate")).toContain("Bearer");
    }
    expect((await call("/api/v1/auth/me", { token: expired })).json.detail).toMatch(/expired/);
    expect((await call("/api/v1/auth/me", { token: wrongAudience })).json.detail).toMatch(/aud/);
    expect((await call("/api/v1/auth/me", { token: hs512 })).json.detail).toMatch(/algorithm/);
  });

  it("refuses a missing token, and an agent API key on a people's endpoint", async () => {
    expectProblem(await call("/api/v1/auth/me"), 401, "UNAUTHORIZED");
    expectProblem(await call("/api/v1/auth/me", { token: "orc_abc" }), 401, "UNAUTHORIZED");
  });
});

describe("users", () => {
  let admin: string;
  beforeAll(async () => {
    admin = (await login(ADMIN.email, ADMIN.password)).json.access_token;
  });

  it("lets admins create and list users, and nobody else", async () => {
    const member = await createUser(admin, "member");
    expectProblem(
      await call("/api/v1/users", { token: member.token, body: { email: "x@example.com", password: "password-x", role: "admin" } }),
      403,
      "FORBIDDEN",
    );
    expectProblem(await call("/api/v1/users", { token: member.token }), 403, "FORBIDDEN");
    const list = await call("/api/v1/users", { token: admin });
    expect(list.json.users.map((u: { email: string }) => u.email)).toContain(member.email);
    expect(JSON.stringify(list.json)).not.toMatch(/password|scrypt/);

    const duplicate = await call("/api/v1/users", { token: admin, body: { email: member.email.toUpperCase(), password: "password-y", role: "viewer" } });
    expectProblem(duplicate, 409, "EMAIL_TAKEN");
    const badRole = await call("/api/v1/users", { token: admin, body: { email: "r@example.com", password: "password-y", role: "owner" } });
    expectProblem(badRole, 422, "VALIDATION_FAILED");
    expect(badRole.json.errors[0].path).toBe("role");
  });

  it("changes a role, and the change applies to the next request", async () => {
    const viewer = await createUser(admin, "viewer");
    expectProblem(await call("/api/v1/projects", { token: viewer.token, body: { name: "nope" } }), 403, "FORBIDDEN");
    const patched = await call(`/api/v1/users/${viewer.id}`, { method: "PATCH", token: admin, body: { role: "member" } });
    expect(patched.json.role).toBe("member");
    expect((await call("/api/v1/projects", { token: viewer.token, body: { name: "now allowed" } })).status).toBe(201);
  });

  it("deletes a user, whose tokens then stop working", async () => {
    const gone = await createUser(admin, "member");
    expect((await call(`/api/v1/users/${gone.id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expectProblem(await call("/api/v1/auth/me", { token: gone.token }), 401, "INVALID_TOKEN");
    expectProblem(await call(`/api/v1/users/${adminId}`, { method: "DELETE", token: admin }), 409, "CANNOT_DELETE_SELF");
  });

  it("lets people change their own password", async () => {
    const member = await createUser(admin, "member");
    expectProblem(
      await call("/api/v1/auth/password", { token: member.token, body: { current_password: "wrong-one", new_password: "brand-new-pass" } }),
      403,
      "INVALID_CREDENTIALS",
    );
    const changed = await call("/api/v1/auth/password", {
      token: member.token,
      body: { current_password: member.password, new_password: "brand-new-pass" },
    });
    expect(changed.status).toBe(200);
    expect((await login(member.email, member.password)).status).toBe(401);
    expect((await login(member.email, "brand-new-pass")).status).toBe(200);
  });

  it("throttles password changes per person and per client address, like sign-ins", async () => {
    const member = await createUser(admin, "member");
    const guess = (current_password: string, headers: Record<string, string> = {}) =>
      call("/api/v1/auth/password", { token: member.token, body: { current_password, new_password: "brand-new-pass" }, headers });
    await clearOfWindowEdge();
    // Each guess comes from another address (call()'s default): the person's own count stops them.
    const replies = [];
    for (let i = 0; i < 12; i++) replies.push(await guess(`wrong-${i}`));
    expect(replies.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(403));
    expectProblem(replies[10]!, 429, "RATE_LIMITED");
    expect(replies[10]!.headers.get("Retry-After")).toBe("60");
    // Once throttled, even the right password does not get through.
    expectProblem(await guess(member.password), 429, "RATE_LIMITED");
    expect((await login(member.email, member.password)).status).toBe(200);

    // One address trying many accounts is stopped too, and its sign-ins with it.
    const ip = { "CF-Connecting-IP": "203.0.113.77" };
    await clearOfWindowEdge();
    const fromOne = [];
    for (let i = 0; i < 11; i++) {
      // Accounts made without signing in (each sign-in would count too): their tokens are issued directly.
      const email = `guessed-${i}-${crypto.randomUUID().slice(0, 6)}@example.com`;
      const other = await call("/api/v1/users", { token: admin, body: { email, password: "password-guessed", role: "member" } });
      const token = await accessTokenUntil(other.json.id, Math.floor(Date.now() / 1000) + 600);
      fromOne.push(await call("/api/v1/auth/password", { token, body: { current_password: "wrong", new_password: "brand-new-pass" }, headers: ip }));
    }
    expect(fromOne.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(403));
    expectProblem(fromOne[10]!, 429, "RATE_LIMITED");
    expectProblem(await call("/api/v1/auth/login", { body: { email: member.email, password: member.password }, headers: ip }), 429, "RATE_LIMITED");
  });
});
