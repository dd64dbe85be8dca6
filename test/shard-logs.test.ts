/**
 * A project an admin placed on DB_1: its permission log is written and read there, and its agents' telemetry finds
 * their sessions there (usage on the running task, tool decisions in the log).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { hookLines, postPermissionLog } from "./fake-daemon";
import { bootstrapAdmin, call, registerAgent, until } from "./helpers";
import { claudeResource, exportingToHub, hubMeter } from "./otlp-exporters";
import { cli, expectOk, openSession, T } from "./task-world";

let admin: string;
let project: { id: string };
let worker: Awaited<ReturnType<typeof registerAgent>>;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  project = (await expectOk(call("/api/v1/projects", { token: admin, body: { name: "Logged on DB_1", shard: "DB_1" } }), 201)).json;
  worker = await registerAgent(admin, `log-${crypto.randomUUID().slice(0, 6)}`);
});

/** A session of its own running a task of its own. */
async function sessionRunningTask() {
  const name = `s-${crypto.randomUUID().slice(0, 8)}`;
  const sessionId = await openSession(worker.apiKey, project.id, name);
  const created = await expectOk(call("/api/v1/tasks", { token: admin, body: { title: "Logged", spec: "Do it", project_id: project.id } }), 201);
  await expectOk(call(`/api/v1/tasks/${created.json.id}/assign`, { token: admin, body: { session_name: name } }));
  await expectOk(cli(worker.apiKey, "POST", `${T}/${created.json.id}/start`));
  return { sessionId, taskId: created.json.id as string };
}

const logOf = async (projectId: string) => (await expectOk(call(`/api/v1/projects/${projectId}/permission-log`, { token: admin }))).json.entries as any[];

describe("the permission log of a project on DB_1", () => {
  it("takes the hook's entries of its sessions, on its shard, filed under the running task, and lists them", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const line = hookLines();
    const posted = await expectOk(
      postPermissionLog(worker.apiKey, [line({ session_id: sessionId }), line({ session_id: sessionId, decision: "denied" })]),
      201,
    );
    expect(posted.json).toMatchObject({ accepted: 2, dropped: 0 });
    const entries = await logOf(project.id);
    expect(entries).toHaveLength(2);
    expect(entries.map((e) => [e.session_id, e.task_id])).toEqual([
      [sessionId, taskId],
      [sessionId, taskId],
    ]);
    const where = async (d1: D1Database) =>
      (await d1.prepare("SELECT count(*) AS n FROM permission_log WHERE project_id = ?1").bind(project.id).first<{ n: number }>())!.n;
    expect([await where(env.DB), await where(env.DB_1!)]).toEqual([0, 2]);
  });
});

describe("telemetry of a session on DB_1", () => {
  it("lands on the task its session is running", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const attrs = { "session.id": crypto.randomUUID(), model: "claude-sonnet-4-6", "orchestratia.session_id": sessionId };
    const meter = hubMeter({ encoding: "json", credential: worker.apiKey, resource: claudeResource(sessionId), temporality: "delta" });
    const answers = await exportingToHub(async () => {
      meter.tokens.add(700, { ...attrs, type: "input" });
      await meter.flush();
    });
    expect(answers.map((a) => a.status)).toEqual([200]);
    const usage = await until(
      () => env.DB_1!.prepare("SELECT input_tokens FROM task_usage WHERE task_id = ?1").bind(taskId).first<{ input_tokens: number }>(),
      (r) => r !== null && r.input_tokens === 700,
      "the usage on DB_1",
    );
    expect(usage!.input_tokens).toBe(700);
  });
});
