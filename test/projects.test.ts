import { beforeAll, describe, expect, it } from "vitest";
import { addMember, bootstrapAdmin, call, createProject, createUser, expectProblem } from "./helpers";

let admin: string;
let alice: Awaited<ReturnType<typeof createUser>>;
let bob: Awaited<ReturnType<typeof createUser>>;
let vera: Awaited<ReturnType<typeof createUser>>;
let apollo: { id: string };
let borealis: { id: string };

beforeAll(async () => {
  admin = await bootstrapAdmin();
  [alice, bob, vera] = await Promise.all([createUser(admin, "member"), createUser(admin, "member"), createUser(admin, "viewer")]);
  apollo = await createProject(alice.token, "Apollo");
  borealis = await createProject(bob.token, "Borealis");
  await addMember(admin, apollo.id, vera.id);
});

const ids = (reply: { json: { projects: { id: string }[] } }) => reply.json.projects.map((p) => p.id).sort();

describe("visibility", () => {
  it("shows members their own projects, viewers the ones they were added to, admins all", async () => {
    expect(ids(await call("/api/v1/projects", { token: alice.token }))).toEqual([apollo.id]);
    expect(ids(await call("/api/v1/projects", { token: bob.token }))).toEqual([borealis.id]);
    expect(ids(await call("/api/v1/projects", { token: vera.token }))).toEqual([apollo.id]);
    expect(ids(await call("/api/v1/projects", { token: admin }))).toEqual([apollo.id, borealis.id].sort());
  });

  it("answers 404 for another project's id, exactly as for a missing one", async () => {
    const other = await call(`/api/v1/projects/${borealis.id}`, { token: alice.token });
    const missing = await call(`/api/v1/projects/${crypto.randomUUID()}`, { token: alice.token });
    expectProblem(other, 404, "NOT_FOUND");
    expect(other.json).toEqual(missing.json);
    expectProblem(await call(`/api/v1/projects/${borealis.id}`, { method: "PUT", token: alice.token, body: { name: "mine" } }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${borealis.id}/members`, { token: alice.token }), 404, "NOT_FOUND");
  });

  it("lets viewers read but not write", async () => {
    const read = await call(`/api/v1/projects/${apollo.id}`, { token: vera.token });
    expect(read.json).toMatchObject({ id: apollo.id, name: "Apollo", slug: "apollo" });
    expectProblem(await call(`/api/v1/projects/${apollo.id}`, { method: "PUT", token: vera.token, body: { name: "x" } }), 403, "FORBIDDEN");
    expectProblem(await call("/api/v1/projects", { token: vera.token, body: { name: "x" } }), 403, "FORBIDDEN");
  });
});

describe("changes", () => {
  it("lets a member update their project; the slug stays", async () => {
    const updated = await call(`/api/v1/projects/${apollo.id}`, {
      method: "PUT",
      token: alice.token,
      body: { name: "Apollo Program", description: "to the moon" },
    });
    expect(updated.json).toMatchObject({ name: "Apollo Program", slug: "apollo", description: "to the moon" });
  });

  it("gives colliding names distinct slugs, even when created concurrently", async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, () => call("/api/v1/projects", { token: admin, body: { name: "Déjà Vu!" } })));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
    const slugs = replies.map((r) => r.json.slug).sort();
    expect(new Set(slugs).size).toBe(8);
    expect(slugs).toEqual(["deja-vu", ...Array.from({ length: 7 }, (_, i) => `deja-vu-${i + 2}`)].sort());
  });

  it("takes names of any legal length, numbering long slugs like short ones, dozens at once", async () => {
    // Slugs of 49 characters and more once made a LIKE pattern longer than D1 allows (50 bytes).
    for (const length of [48, 49, 50, 60, 200]) {
      const name = `${length} ${"long name ".repeat(20)}`.slice(0, length);
      const first = await call("/api/v1/projects", { token: admin, body: { name } });
      expect(first.status, first.text).toBe(201);
      expect(first.json.slug.length).toBeLessThanOrEqual(60);
      const second = await call("/api/v1/projects", { token: admin, body: { name } });
      expect(second.status, second.text).toBe(201);
      expect(second.json.slug).toBe(`${first.json.slug}-2`);
    }
    const name = `${"Concurrent ".repeat(15)}creates`;
    const replies = await Promise.all(Array.from({ length: 40 }, () => call("/api/v1/projects", { token: admin, body: { name } })));
    expect(replies.map((r) => r.status)).toEqual(Array(40).fill(201));
    const base = replies.map((r) => r.json.slug).find((s: string) => !/-\d+$/.test(s));
    expect(base).toHaveLength(60);
    expect(replies.map((r) => r.json.slug).sort()).toEqual([base, ...Array.from({ length: 39 }, (_, i) => `${base}-${i + 2}`)].sort());
    // A name whose own slug ends in digits is not taken for a number.
    const numbered = await call("/api/v1/projects", { token: admin, body: { name: "Release 2024" } });
    const plain = await call("/api/v1/projects", { token: admin, body: { name: "Release" } });
    const again = await call("/api/v1/projects", { token: admin, body: { name: "Release" } });
    expect([numbered.json.slug, plain.json.slug, again.json.slug]).toEqual(["release-2024", "release", "release-2"]);
  });

  it("manages members: only admins add or remove them", async () => {
    expectProblem(await call(`/api/v1/projects/${apollo.id}/members`, { token: alice.token, body: { user_id: bob.id } }), 403, "FORBIDDEN");
    await addMember(admin, apollo.id, bob.id);
    expect(ids(await call("/api/v1/projects", { token: bob.token }))).toEqual([apollo.id, borealis.id].sort());
    const members = await call(`/api/v1/projects/${apollo.id}/members`, { token: vera.token });
    expect(members.json.members.map((m: { id: string }) => m.id).sort()).toEqual([alice.id, bob.id, vera.id].sort());
    expect((await call(`/api/v1/projects/${apollo.id}/members/${bob.id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expectProblem(await call(`/api/v1/projects/${apollo.id}`, { token: bob.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${apollo.id}/members`, { token: admin, body: { user_id: crypto.randomUUID() } }), 404, "NOT_FOUND");
  });

  it("lets only admins delete a project", async () => {
    const doomed = await createProject(alice.token, "Doomed");
    expectProblem(await call(`/api/v1/projects/${doomed.id}`, { method: "DELETE", token: alice.token }), 403, "FORBIDDEN");
    const deleted = await call(`/api/v1/projects/${doomed.id}`, { method: "DELETE", token: admin });
    expect(deleted.json).toEqual({ deleted: true, id: doomed.id });
    expectProblem(await call(`/api/v1/projects/${doomed.id}`, { token: admin }), 404, "NOT_FOUND");
  });

  it("validates names", async () => {
    const reply = await call("/api/v1/projects", { token: admin, body: { name: "   ", description: 5 } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual([
      { path: "name", message: "must not be empty" },
      { path: "description", message: expect.stringMatching(/string/) },
    ]);
  });
});
