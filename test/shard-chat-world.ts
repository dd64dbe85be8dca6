/** Projects placed on a shard with their agents' sessions, and their tasks driven to a question: the chat-on-shards tests' world. */
import { addMember, call, registerAgent } from "./helpers";
import { unique } from "./slack-lane";
import { cli, expectOk, openSession, T, type World } from "./task-world";

/** A project on `shard` (DB_1 unless said) with a worker's and an orchestrator's sessions; `member` in it. */
export async function projectOn(admin: string, member: World["member"], name: string, shard = "DB_1"): Promise<World> {
  const project = (await expectOk(call("/api/v1/projects", { token: admin, body: { name, shard } }), 201)).json;
  await addMember(admin, project.id, member.id);
  const worker = await registerAgent(admin, `worker-${unique()}`);
  const orchestrator = await registerAgent(admin, `orchestrator-${unique()}`);
  const workerSession = await openSession(worker.apiKey, project.id, "worker");
  const orchestratorSession = await openSession(orchestrator.apiKey, project.id, "orchestrator");
  return { admin, member, project, worker, orchestrator, workerSession, orchestratorSession };
}

/** A task of the project, created by its admin, given to the worker and started. */
export async function running(w: World, title: string) {
  const created = await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title, spec: "Do it", project_id: w.project.id } }), 201);
  await expectOk(call(`/api/v1/tasks/${created.json.id}/assign`, { token: w.admin, body: { session_name: "worker" } }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${created.json.id}/start`));
  return created.json.id as string;
}

/** The worker's question on the task (or its request for approval); the intervention's id. */
export const ask = async (w: World, taskId: string, question: string, type = "question") =>
  (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question, intervention_type: type }))).json.intervention_id as string;
