import { beforeAll, expect, it } from "vitest";
import { bootstrapAdmin, call, createProject, registerAgent } from "./helpers";

let admin: string;
let project: { id: string };
let agent: { apiKey: string; id: string };

beforeAll(async () => {
  admin = await bootstrapAdmin();
  project = await createProject(admin, "Smoke");
  agent = await registerAgent(admin, "smoke-agent");
});

it("runs a task from creation to done", async () => {
  const session = await call("/api/v1/server/sessions", { apiKey: agent.apiKey, body: { name: "worker", project_id: project.id } });
  const created = await call("/api/v1/server/tasks", { apiKey: agent.apiKey, body: { title: "T", spec: "S", session_id: session.json.id } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.id;
  const assigned = await call(`/api/v1/server/tasks/${id}/assign`, { apiKey: agent.apiKey, body: { session_name: "worker" } });
  expect(assigned.status, assigned.text).toBe(200);
  expect(assigned.json.status).toBe("assigned");
  const check = await call(`/api/v1/server/tasks/check?session_id=${session.json.id}`, { apiKey: agent.apiKey });
  expect(check.json.count, check.text).toBe(1);
  const started = await call(`/api/v1/server/tasks/${id}/start`, { apiKey: agent.apiKey, method: "POST" });
  expect(started.json.status, started.text).toBe("running");
  const note = await call(`/api/v1/server/tasks/${id}/notes`, { apiKey: agent.apiKey, body: { content: "hi", urgent: false } });
  expect(note.status, note.text).toBe(201);
  const done = await call(`/api/v1/server/tasks/${id}/complete`, { apiKey: agent.apiKey, body: { result: "did it" } });
  expect(done.json, done.text).toMatchObject({ status: "done", result: { summary: "did it", completed_by: "agent:smoke-agent" } });
  expect(done.json.recent_notes).toHaveLength(1);
  const events = await call(`/api/v1/projects/${project.id}/events`, { token: admin });
  expect(events.json.events.map((e: { type: string }) => e.type)).toEqual(["task_created", "task_assigned", "task_started", "note_added", "task_completed"]);
  expect(events.json.events.map((e: { seq: number }) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  const status = await call(`/api/v1/server/status?session_id=${session.json.id}`, { apiKey: agent.apiKey });
  expect(status.json, status.text).toMatchObject({ connected: true, session_name: "worker", project_name: "Smoke", task_summary: { total: 0 } });
});
