import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { bootstrapAdmin, call, createProject, createUser, expectProblem, registerAgent } from "./helpers";

let admin: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
});

const projectCount = async (name: string) =>
  (await env.DB.prepare("SELECT count(*) AS count FROM projects WHERE name = ?1").bind(name).first<{ count: number }>())!.count;

it("replays the first response for the same key and body", async () => {
  const headers = { "Idempotency-Key": "create-once" };
  const first = await call("/api/v1/projects", { token: admin, body: { name: "Once" }, headers });
  const again = await call("/api/v1/projects", { token: admin, body: { name: "Once" }, headers });
  expect(first.status).toBe(201);
  expect(again.status).toBe(201);
  expect(again.json).toEqual(first.json);
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  expect(await projectCount("Once")).toBe(1);
});

it("answers 422 for the same key with a different body", async () => {
  const headers = { "Idempotency-Key": "one-key" };
  expect((await call("/api/v1/projects", { token: admin, body: { name: "First" }, headers })).status).toBe(201);
  expectProblem(await call("/api/v1/projects", { token: admin, body: { name: "Second" }, headers }), 422, "IDEMPOTENCY_KEY_REUSED");
  expect(await projectCount("Second")).toBe(0);
});

it("runs concurrent requests with one key exactly once; the others wait (409) or replay", async () => {
  const headers = { "Idempotency-Key": "racing" };
  const replies = await Promise.all(Array.from({ length: 30 }, () => call("/api/v1/projects", { token: admin, body: { name: "Raced" }, headers })));
  const created = replies.filter((r) => r.status === 201);
  const inFlight = replies.filter((r) => r.status === 409);
  expect(created.length + inFlight.length).toBe(30);
  expect(inFlight.length).toBeGreaterThan(0);
  for (const r of inFlight) expectProblem(r, 409, "IDEMPOTENCY_KEY_IN_FLIGHT");
  expect(new Set(created.map((r) => r.json.id)).size).toBe(1);
  expect(await projectCount("Raced")).toBe(1);
});

it("keeps keys per caller: the same key from someone else is a new request", async () => {
  const member = await createUser(admin, "member");
  const headers = { "Idempotency-Key": "shared-key" };
  const mine = await call("/api/v1/projects", { token: admin, body: { name: "Shared" }, headers });
  const theirs = await call("/api/v1/projects", { token: member.token, body: { name: "Shared" }, headers });
  expect(theirs.json.id).not.toBe(mine.json.id);
  expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
});

it("replays errors too, and works for agents", async () => {
  const project = await createProject(admin, "Agents");
  const agent = await registerAgent(admin, "idem-agent");
  const headers = { "Idempotency-Key": "session-1" };
  const body = { name: "s1", project_id: project.id };
  const first = await call("/api/v1/server/sessions", { apiKey: agent.apiKey, body, headers });
  const replay = await call("/api/v1/server/sessions", { apiKey: agent.apiKey, body, headers });
  expect(replay.json.id).toBe(first.json.id);
  const conflict = await call("/api/v1/server/sessions", { apiKey: agent.apiKey, body, headers: { "Idempotency-Key": "session-2" } });
  expectProblem(conflict, 409, "SESSION_NAME_TAKEN");
  const conflictReplay = await call("/api/v1/server/sessions", { apiKey: agent.apiKey, body, headers: { "Idempotency-Key": "session-2" } });
  expect(conflictReplay.status).toBe(409);
  expect(conflictReplay.headers.get("Idempotent-Replayed")).toBe("true");
});

it("lets a key expire after 24 hours", async () => {
  const headers = { "Idempotency-Key": "old-key" };
  const first = await call("/api/v1/projects", { token: admin, body: { name: "Old" }, headers });
  await env.DB.prepare("UPDATE idempotency_keys SET created_at = ?1 WHERE key = 'old-key'").bind(new Date(Date.now() - 25 * 3600_000).toISOString()).run();
  const later = await call("/api/v1/projects", { token: admin, body: { name: "Old" }, headers });
  expect(later.status).toBe(201);
  expect(later.json.id).not.toBe(first.json.id);
});

it("refuses a malformed key", async () => {
  const reply = await call("/api/v1/projects", { token: admin, body: { name: "k" }, headers: { "Idempotency-Key": "x".repeat(300) } });
  expectProblem(reply, 422, "VALIDATION_FAILED");
  expect(reply.json.errors[0].path).toBe("header.Idempotency-Key");
});
