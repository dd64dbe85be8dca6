import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { addMember, bootstrapAdmin, call, createProject, createUser, expectProblem, registerAgent } from "./helpers";

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

it("replays an answer only to a caller still granted what the first request was", async () => {
  const project = await createProject(admin, "Replays");
  const member = await createUser(admin, "member");
  await addMember(admin, project.id, member.id);
  const headers = { "Idempotency-Key": "hook-1" };
  const body = { url: "https://example.com/hook", events: ["task_cancelled"] };
  const hooks = `/api/v1/projects/${project.id}/webhooks`;
  const first = await call(hooks, { token: member.token, body, headers });
  expect(first.status).toBe(201);
  expect(first.json.secret).toMatch(/^whsec_/);
  const replay = await call(hooks, { token: member.token, body, headers });
  expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
  expect(replay.json.secret).toBe(first.json.secret);
  // A task's note, checked through its task.
  const task = await call("/api/v1/tasks", { token: member.token, body: { title: "Noted", project_id: project.id } });
  const noteHeaders = { "Idempotency-Key": "note-1" };
  const note = await call(`/api/v1/tasks/${task.json.id}/notes`, { token: member.token, body: { content: "mine" }, headers: noteHeaders });
  expect(note.status).toBe(201);

  expect((await call(`/api/v1/projects/${project.id}/members/${member.id}`, { method: "DELETE", token: admin })).status).toBe(200);
  const refused = await call(hooks, { token: member.token, body, headers });
  expectProblem(refused, 404, "NOT_FOUND");
  expect(refused.text).not.toContain("whsec_");
  expect(refused.headers.get("Idempotent-Replayed")).toBeNull();
  expectProblem(await call(`/api/v1/tasks/${task.json.id}/notes`, { token: member.token, body: { content: "mine" }, headers: noteHeaders }), 404, "NOT_FOUND");
  // Back in the project, the same answer again.
  await addMember(admin, project.id, member.id);
  expect((await call(hooks, { token: member.token, body, headers })).json.secret).toBe(first.json.secret);
});

it("refuses a replay of a write to a member made a viewer", async () => {
  const project = await createProject(admin, "Demoted");
  const member = await createUser(admin, "member");
  await addMember(admin, project.id, member.id);
  const headers = { "Idempotency-Key": "rotate-1" };
  const hook = await call(`/api/v1/projects/${project.id}/webhooks`, {
    token: member.token,
    body: { url: "https://example.com/d", events: ["task_cancelled"] },
  });
  const rotate = `/api/v1/projects/${project.id}/webhooks/${hook.json.id}/rotate-secret`;
  const rotated = await call(rotate, { method: "POST", token: member.token, headers });
  expect(rotated.status).toBe(200);
  expect((await call(`/api/v1/users/${member.id}`, { method: "PATCH", token: admin, body: { role: "viewer" } })).status).toBe(200);
  const refused = await call(rotate, { method: "POST", token: member.token, headers });
  expectProblem(refused, 403, "FORBIDDEN");
  expect(refused.text).not.toContain("whsec_");
});

it("keeps answers holding a secret sealed, never in clear", async () => {
  const project = await createProject(admin, "Sealed answers");
  const headers = { "Idempotency-Key": "sealed-hook" };
  const hooks = `/api/v1/projects/${project.id}/webhooks`;
  const created = await call(hooks, { token: admin, body: { url: "https://example.com/s", events: ["task_cancelled"] }, headers });
  const rotated = await call(`${hooks}/${created.json.id}/rotate-secret`, { method: "POST", token: admin, headers: { "Idempotency-Key": "sealed-rotation" } });
  const { results } = await env.DB.prepare(
    "SELECT key, response_body, sealed FROM idempotency_keys WHERE key IN ('sealed-hook', 'sealed-rotation') ORDER BY key",
  ).all<{ key: string; response_body: string; sealed: number }>();
  expect(results.map((r) => [r.key, r.sealed])).toEqual([
    ["sealed-hook", 1],
    ["sealed-rotation", 1],
  ]);
  for (const [row, secret] of [
    [results[0]!, created.json.secret],
    [results[1]!, rotated.json.secret],
  ] as const) {
    expect(row.response_body).toMatch(/^v1\./);
    expect(row.response_body).not.toContain(secret.slice(6));
    expect(row.response_body).not.toContain("whsec_");
  }
  // An answer without a secret is kept as it was.
  const plain = await env.DB.prepare("SELECT response_body, sealed FROM idempotency_keys WHERE key = 'create-once'").first<{
    response_body: string;
    sealed: number;
  }>();
  expect(plain).toMatchObject({ sealed: 0, response_body: expect.stringContaining('"name":"Once"') });
  // And it replays the same secret.
  expect((await call(hooks, { token: admin, body: { url: "https://example.com/s", events: ["task_cancelled"] }, headers })).json.secret).toBe(
    created.json.secret,
  );
});
