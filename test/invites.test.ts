/**
 * Invites: an admin's link makes one account with the role and projects it names, once, before it expires; the
 * token is shown once and kept as a digest; concurrent accepts of one invite make exactly one account.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../src/auth/secrets";
import { bootstrapAdmin, call, createProject, expectProblem, login, type Reply } from "./helpers";
import { createPerson as createUser } from "./people-helpers";

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

let n = 0;
const newEmail = () => `invitee-${++n}-${crypto.randomUUID().slice(0, 6)}@example.com`;
const invite = (body: Record<string, unknown>, token = admin) => call("/api/v1/invites", { token, body });
const accept = (body: Record<string, unknown>, headers?: Record<string, string>) => call("/api/v1/invites/accept", { body, headers });
const preview = (token: string) => call(`/api/v1/invites/accept?token=${encodeURIComponent(token)}`);
const acceptAs = (token: string, email = newEmail()) => accept({ token, email, name: "New Person", password: "a-good-password" });

function created(reply: Reply) {
  expect(reply.status, reply.text).toBe(201);
  return reply.json as {
    id: string;
    token: string;
    url: string;
    expires_at: string;
    role: string;
    projects: { project_id: string; name: string; role: string }[];
  };
}

describe("making an invite", () => {
  it("answers the link and its token once, keeps only the token's digest, and lists it without the token", async () => {
    const project = await createProject(admin);
    const before = Date.now();
    const made = created(await invite({ role: "member", projects: [{ project_id: project.id, role: "viewer" }], email: "Someone@Example.com" }));
    expect(made.token).toMatch(/^orci_/);
    expect(made.url).toBe(`https://hub.test/invite?token=${made.token}`);
    expect(made).toMatchObject({ role: "member", email: "someone@example.com", projects: [{ project_id: project.id, name: project.name, role: "viewer" }] });
    // A week by default.
    const week = 7 * 86400 * 1000;
    expect(Date.parse(made.expires_at) - before).toBeGreaterThanOrEqual(week - 1000);
    expect(Date.parse(made.expires_at) - before).toBeLessThanOrEqual(week + 5000);

    const row = await env.DB.prepare("SELECT * FROM invites WHERE id = ?1").bind(made.id).first<Record<string, unknown>>();
    expect(row!.token_hash).toBe(await sha256Hex(made.token));
    expect(JSON.stringify(row)).not.toContain(made.token);

    const listed = await call("/api/v1/invites", { token: admin });
    const mine = listed.json.invites.find((i: { id: string }) => i.id === made.id);
    expect(mine).toMatchObject({ role: "member", email: "someone@example.com" });
    expect(JSON.stringify(listed.json)).not.toContain(made.token);
    expect(mine.token).toBeUndefined();
    expect(mine.url).toBeUndefined();
  });

  it("is for admins only", async () => {
    const member = await createUser(admin, "member");
    expectProblem(await invite({ role: "member" }, member.token), 403, "FORBIDDEN");
    expectProblem(await call("/api/v1/invites", { token: member.token }), 403, "FORBIDDEN");
    expectProblem(await call("/api/v1/invites", { body: { role: "member" } }), 401, "UNAUTHORIZED");
  });

  it("refuses malformed invites naming the field", async () => {
    const project = await createProject(admin);
    const cases: [Record<string, unknown>, string][] = [
      [{ role: "owner" }, "role"],
      [{}, "role"],
      [{ role: "member", projects: [{ project_id: crypto.randomUUID() }] }, "projects.0.project_id"],
      [{ role: "member", projects: [{ project_id: "not-a-uuid" }] }, "projects.0.project_id"],
      [{ role: "member", projects: [{ project_id: project.id, role: "admin" }] }, "projects.0.role"],
      [{ role: "member", projects: [{ project_id: project.id }, { project_id: project.id }] }, "projects"],
      [{ role: "member", email: "not an email" }, "email"],
      [{ role: "member", expires_in_seconds: 10 }, "expires_in_seconds"],
      [{ role: "member", expires_in_seconds: 31 * 86400 }, "expires_in_seconds"],
    ];
    for (const [body, path] of cases) {
      const reply = await invite(body);
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
  });

  it("is withdrawn by an admin: its link is gone, and withdrawing it again is 404", async () => {
    const made = created(await invite({ role: "viewer" }));
    expect((await call(`/api/v1/invites/${made.id}`, { method: "DELETE", token: admin })).json).toEqual({ deleted: true, id: made.id });
    expectProblem(await preview(made.token), 410, "INVITE_GONE");
    expectProblem(await acceptAs(made.token), 410, "INVITE_GONE");
    expectProblem(await call(`/api/v1/invites/${made.id}`, { method: "DELETE", token: admin }), 404, "NOT_FOUND");
    expect((await call("/api/v1/invites", { token: admin })).json.invites.map((i: { id: string }) => i.id)).not.toContain(made.id);
  });
});

describe("accepting an invite", () => {
  it("shows what it offers without sign-in, then makes the account with its role and projects and signs it in", async () => {
    const [apollo, borealis, other] = [await createProject(admin), await createProject(admin), await createProject(admin)];
    const made = created(
      await invite({
        role: "member",
        projects: [
          { project_id: apollo.id, role: "viewer" },
          { project_id: borealis.id, role: "member" },
        ],
      }),
    );
    const shown = await preview(made.token);
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json).toEqual({
      role: "member",
      projects: [
        { id: apollo.id, name: apollo.name, role: "viewer" },
        { id: borealis.id, name: borealis.name, role: "member" },
      ],
      email: null,
      expires_at: made.expires_at,
    });

    const email = newEmail();
    const signedIn = await accept({ token: made.token, email: email.toUpperCase(), name: "Tess Mate", password: "a-good-password" });
    expect(signedIn.status, signedIn.text).toBe(201);
    expect(signedIn.json.user).toMatchObject({ email, name: "Tess Mate", role: "member", active: true });
    expect(signedIn.json.refresh_token).toMatch(/^orr_/);
    const token = signedIn.json.access_token as string;
    // The new account sees the granted projects only, with the granted role in each.
    const projects = await call("/api/v1/projects", { token });
    expect(projects.json.projects.map((p: { id: string }) => p.id).sort()).toEqual([apollo.id, borealis.id].sort());
    expect((await call(`/api/v1/projects/${apollo.id}`, { token })).json.my_role).toBe("viewer");
    expect((await call(`/api/v1/projects/${borealis.id}`, { token })).json.my_role).toBe("member");
    expectProblem(await call(`/api/v1/projects/${other.id}`, { token }), 404, "NOT_FOUND");
    expectProblem(await call("/api/v1/tasks", { token, body: { project_id: apollo.id, title: "not mine to add" } }), 403, "FORBIDDEN");
    expect((await call("/api/v1/tasks", { token, body: { project_id: borealis.id, title: "mine to add" } })).status).toBe(201);
    // The password set works for signing in.
    expect((await login(email, "a-good-password")).status).toBe(200);

    // Used once: gone for everyone after, and no longer pending.
    expectProblem(await preview(made.token), 410, "INVITE_GONE");
    expectProblem(await acceptAs(made.token), 410, "INVITE_GONE");
    expect((await call("/api/v1/invites", { token: admin })).json.invites.map((i: { id: string }) => i.id)).not.toContain(made.id);
  });

  it("puts the refresh token in the dashboard's cookie when asked", async () => {
    const made = created(await invite({ role: "viewer" }));
    const reply = await accept({ token: made.token, email: newEmail(), name: "Cookie", password: "a-good-password", refresh_cookie: true });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json.refresh_token).toBeUndefined();
    expect(reply.headers.get("Set-Cookie")).toMatch(/^orc_refresh=orr_.*HttpOnly/);
  });

  it("answers 410 for an expired invite, and for a token that never was", async () => {
    const made = created(await invite({ role: "member", expires_in_seconds: 60 }));
    await env.DB.prepare("UPDATE invites SET expires_at = ?2 WHERE id = ?1")
      .bind(made.id, new Date(Date.now() - 1000).toISOString())
      .run();
    expectProblem(await preview(made.token), 410, "INVITE_GONE");
    expectProblem(await acceptAs(made.token), 410, "INVITE_GONE");
    expect((await call("/api/v1/invites", { token: admin })).json.invites.map((i: { id: string }) => i.id)).not.toContain(made.id);
    expectProblem(await preview("orci_made-up"), 410, "INVITE_GONE");
    expectProblem(await acceptAs(made.token.slice(0, -1) + (made.token.endsWith("a") ? "b" : "a")), 410, "INVITE_GONE");
  });

  it("lets only the named address accept an invite that names one, and keeps it usable after a refusal", async () => {
    const email = newEmail();
    const made = created(await invite({ role: "member", email }));
    expect((await preview(made.token)).json.email).toBe(email);
    const wrong = await acceptAs(made.token, newEmail());
    expectProblem(wrong, 403, "INVITE_EMAIL_MISMATCH");
    expect(wrong.json.detail).toContain(email);
    expect((await acceptAs(made.token, email)).status).toBe(201);
  });

  it("refuses an address that has an account (409) without spending the invite", async () => {
    const existing = await createUser(admin, "viewer");
    const made = created(await invite({ role: "admin" }));
    expectProblem(await acceptAs(made.token, existing.email), 409, "EMAIL_TAKEN");
    // The existing account kept its role and password.
    expect((await login(existing.email, existing.password)).json.user.role).toBe("viewer");
    const fresh = await acceptAs(made.token);
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.json.user.role).toBe("admin");
  });

  it("refuses malformed accepts naming the field, before the token is looked at", async () => {
    const made = created(await invite({ role: "member" }));
    const cases: [Record<string, unknown>, string][] = [
      [{ email: newEmail(), name: "A", password: "a-good-password" }, "token"],
      [{ token: made.token, name: "A", password: "a-good-password" }, "email"],
      [{ token: made.token, email: newEmail(), name: "  ", password: "a-good-password" }, "name"],
      [{ token: made.token, email: newEmail(), name: "A", password: "short" }, "password"],
    ];
    for (const [body, path] of cases) {
      const reply = await accept(body);
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expectProblem(await call("/api/v1/invites/accept"), 422, "VALIDATION_FAILED");
    // Still usable.
    expect((await acceptAs(made.token)).status).toBe(201);
  });

  it("makes exactly one account when dozens accept one invite at once", async () => {
    const project = await createProject(admin);
    const made = created(await invite({ role: "member", projects: [{ project_id: project.id, role: "member" }] }));
    const emails = Array.from({ length: 30 }, () => newEmail());
    const replies = await Promise.all(emails.map((email) => acceptAs(made.token, email)));
    const winners = replies.filter((r) => r.status === 201);
    expect(winners).toHaveLength(1);
    for (const r of replies) if (r.status !== 201) expectProblem(r, 410, "INVITE_GONE");
    const { results } = await env.DB.prepare("SELECT email FROM users WHERE email IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(emails)).all();
    expect(results).toEqual([{ email: winners[0]!.json.user.email }]);
    const members = await call(`/api/v1/projects/${project.id}/members`, { token: admin });
    expect(members.json.members.filter((m: { email: string }) => emails.includes(m.email))).toHaveLength(1);
  });

  it("makes exactly one account when dozens accept one invite at once with the same address", async () => {
    const made = created(await invite({ role: "viewer" }));
    const email = newEmail();
    const replies = await Promise.all(Array.from({ length: 20 }, () => acceptAs(made.token, email)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies) if (r.status !== 201) expect([409, 410]).toContain(r.status);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?1").bind(email).first())!.n).toBe(1);
  });

  it("throttles guesses at tokens from one address, as sign-ins are", async () => {
    const headers = { "CF-Connecting-IP": "203.0.113.77" };
    const replies: Reply[] = [];
    for (let i = 0; i < 12; i++) replies.push(await call(`/api/v1/invites/accept?token=orci_guess-${i}`, { headers }));
    expect(replies.slice(0, 10).every((r) => r.status === 410)).toBe(true);
    expectProblem(replies[11]!, 429, "RATE_LIMITED");
    expect(replies[11]!.headers.get("Retry-After")).toBe("60");
    const made = created(await invite({ role: "member" }));
    // Even a right token, from the throttled address.
    expectProblem(await accept({ token: made.token, email: newEmail(), name: "A", password: "a-good-password" }, headers), 429, "RATE_LIMITED");
  });
});
