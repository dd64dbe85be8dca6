/** A project with a worker agent (session "worker"), an orchestrator agent, and people, for task tests. */
import { expect } from "vitest";
import { addMember, answered, bootstrapAdmin, call, createProject, createUser, hubAs, registerAgent, type Reply } from "./helpers";

export interface World {
  admin: string;
  member: Awaited<ReturnType<typeof createUser>>;
  project: { id: string; name: string };
  worker: { id: string; apiKey: string; name: string };
  orchestrator: { id: string; apiKey: string; name: string };
  workerSession: string;
  orchestratorSession: string;
}

export async function createWorld(name = "World"): Promise<World> {
  return worldUnder(await bootstrapAdmin(), name);
}

/** Another world under the hub's admin (a file's first world bootstrapped it). */
export async function worldUnder(admin: string, name: string): Promise<World> {
  const member = await createUser(admin, "member");
  const project = await createProject(admin, name);
  await addMember(admin, project.id, member.id);
  const worker = await registerAgent(admin, `worker-${crypto.randomUUID().slice(0, 6)}`);
  const orchestrator = await registerAgent(admin, `orchestrator-${crypto.randomUUID().slice(0, 6)}`);
  const workerSession = await openSession(worker.apiKey, project.id, "worker");
  const orchestratorSession = await openSession(orchestrator.apiKey, project.id, "orchestrator");
  return { admin, member, project, worker, orchestrator, workerSession, orchestratorSession };
}

export async function openSession(apiKey: string, projectId: string, name: string): Promise<string> {
  return (await answered(hubAs({ apiKey }).POST("/api/v1/server/sessions", { body: { name, project_id: projectId } }), 201)).id;
}

/** Requests the way the official CLI makes them: X-API-Key, a JSON Content-Type always, a body only when there is data. */
export function cli(apiKey: string, method: string, path: string, data?: unknown): Promise<Reply> {
  const hasBody = data !== undefined && data !== null && !(typeof data === "object" && Object.keys(data).length === 0);
  return call(path, {
    method,
    apiKey,
    headers: { "Content-Type": "application/json", "User-Agent": "Python-urllib/3.11" },
    ...(hasBody ? { raw: JSON.stringify(data) } : {}),
  });
}

export const T = "/api/v1/server/tasks";

export async function newTask(w: World, body: Record<string, unknown> = {}): Promise<string> {
  const reply = await cli(w.orchestrator.apiKey, "POST", T, {
    title: "A task",
    spec: "Do it",
    priority: "normal",
    type: "feature",
    project_id: w.project.id,
    ...body,
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.id;
}

export async function expectOk(reply: Promise<Reply> | Reply, status = 200): Promise<Reply> {
  const r = await reply;
  expect(r.status, r.text).toBe(status);
  return r;
}

export async function taskStatus(w: World, id: string): Promise<string> {
  return (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json.status;
}

/** Creates a task and drives it to `status` through the API, as its agents would. Returns its id and, in needs_human, the open intervention. */
export async function taskIn(w: World, status: string): Promise<{ id: string; interventionId?: string }> {
  const id = await newTask(w);
  const task = { params: { path: { id } } };
  const worker = hubAs({ apiKey: w.worker.apiKey });
  const assign = (requirePlan = false) =>
    answered(
      hubAs({ apiKey: w.orchestrator.apiKey }).POST("/api/v1/server/tasks/{id}/assign", {
        ...task,
        body: { session_name: "worker", ...(requirePlan ? { require_plan: true } : {}) },
      }),
    );
  switch (status) {
    case "pending":
      break;
    case "assigned":
      await assign();
      break;
    case "planning":
      await assign(true);
      break;
    case "plan_review":
      await assign(true);
      await answered(worker.POST("/api/v1/server/tasks/{id}/plan", { ...task, body: { plan: { summary: "the plan" } } }));
      break;
    case "running":
    case "needs_human":
    case "done":
    case "failed":
      await assign();
      await answered(worker.POST("/api/v1/server/tasks/{id}/start", task));
      if (status === "needs_human") {
        const help = await answered(
          worker.POST("/api/v1/server/tasks/{id}/help", { ...task, body: { question: "which way?", intervention_type: "question" } }),
        );
        return { id, interventionId: help.intervention_id };
      }
      if (status === "done") await answered(worker.POST("/api/v1/server/tasks/{id}/complete", { ...task, body: { result: "finished" } }));
      if (status === "failed") await answered(worker.POST("/api/v1/server/tasks/{id}/fail", { ...task, body: { error: "broke" } }));
      break;
    case "cancelled":
      await answered(hubAs({ apiKey: w.orchestrator.apiKey }).DELETE("/api/v1/server/tasks/{id}", task));
      break;
    default:
      throw new Error(`cannot drive a task to ${status}`);
  }
  expect(await taskStatus(w, id)).toBe(status);
  return { id };
}
