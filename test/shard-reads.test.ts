/**
 * A project an admin placed on DB_1: every path that finds its rows by an id alone (a DataRef, a session, an
 * intervention, a client's own task id) or lists them across projects reads them on DB_1, not in the directory.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, bootstrapAdmin, call, createUser, fetchUrl, registerAgent, until } from "./helpers";
import { cli, expectOk, openSession, T } from "./task-world";
import { rpc } from "./a2a-client";
import { upsertStatements } from "../src/db/row-copy";
import { mirrorServers } from "../src/db/shard-mirrors";
import { shardsHolding } from "./move-world";

let admin: string;
let project: { id: string };
let member: Awaited<ReturnType<typeof createUser>>;
let worker: Awaited<ReturnType<typeof registerAgent>>;
let session: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  project = (await expectOk(call("/api/v1/projects", { token: admin, body: { name: "On DB_1", shard: "DB_1" } }), 201)).json;
  member = await createUser(admin, "member");
  await addMember(admin, project.id, member.id);
  worker = await registerAgent(admin, `w1-${crypto.randomUUID().slice(0, 6)}`);
  session = await openSession(worker.apiKey, project.id, "worker");
});

/** A task of the project given to the worker's session and started. */
async function running(body: Record<string, unknown> = {}) {
  const created = await expectOk(call("/api/v1/tasks", { token: admin, body: { title: "On the shard", spec: "Do it", project_id: project.id, ...body } }), 201);
  await expectOk(call(`/api/v1/tasks/${created.json.id}/assign`, { token: admin, body: { session_name: "worker" } }));
  await expectOk(cli(worker.apiKey, "POST", `${T}/${created.json.id}/start`));
  return created.json.id as string;
}

describe("a DataRef of a project on DB_1", () => {
  it("is described, uploaded, downloaded and linked from its shard", async () => {
    const bytes = new TextEncoder().encode("on the shard");
    const made = await expectOk(call("/api/v1/server/datarefs", { apiKey: worker.apiKey, body: { project_id: project.id, size: bytes.byteLength } }), 201);
    const id = made.json.dataref.id as string;
    expect(await shardsHolding("datarefs", id)).toEqual(["DB_1"]);
    const put = await fetchUrl(made.json.upload.url, { method: "PUT", body: bytes, headers: { "Content-Length": String(bytes.byteLength) } });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await put.json()).toMatchObject({ id, status: "complete" });
    const meta = (await expectOk(call(`/api/v1/projects/${project.id}/datarefs/${id}`, { token: member.token }))).json;
    expect(meta.status).toBe("complete");
    const got = await fetchUrl(meta.download.url);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe("on the shard");

    // A result pointing to it is linked for a member, and written through the room only because it is the project's.
    const task = await running();
    const pointer = { $dataref: id, size: bytes.byteLength };
    await expectOk(cli(worker.apiKey, "POST", `${T}/${task}/complete`, { result: { summary: "see the file", file: pointer } }));
    const read = (await expectOk(call(`/api/v1/tasks/${task}`, { token: member.token }))).json;
    expect(read.result.file.url).toEqual(expect.stringContaining(`/api/v1/blobs/${id}`));
  });
});

describe("a session of a project on DB_1", () => {
  it("is reported on, checked, shown in the status and closed by the server hosting it", async () => {
    const task = await running();
    const mcp = await expectOk(cli(worker.apiKey, "PATCH", `/api/v1/server/sessions/${session}/mcp-status`, { mcp_status: "written" }));
    expect(mcp.json).toMatchObject({ id: session, mcp_status: "written" });
    const checked = (await expectOk(cli(worker.apiKey, "GET", `${T}/check?session_id=${session}`))).json;
    expect(checked.tasks.map((t: { id: string }) => t.id)).toContain(task);
    const status = (await expectOk(cli(worker.apiKey, "GET", `/api/v1/server/status?session_id=${session}`))).json;
    expect(status).toMatchObject({ session_id: session, project_id: project.id, project_name: "On DB_1" });
    expect(status.tasks.map((t: { id: string }) => t.id)).toContain(task);
    const other = await openSession(worker.apiKey, project.id, "closing");
    const closed = await expectOk(cli(worker.apiKey, "DELETE", `/api/v1/server/sessions/${other}`));
    expect(closed.json).toMatchObject({ id: other, status: "closed" });
  });
});

describe("an intervention of a project on DB_1", () => {
  it("is listed by project and among all a member sees, and answered by its id", async () => {
    const task = await running();
    const help = await expectOk(cli(worker.apiKey, "POST", `${T}/${task}/help`, { question: "which way?", intervention_type: "question" }));
    const id = help.json.intervention_id as string;
    expect(await shardsHolding("interventions", id)).toEqual(["DB_1"]);
    const byProject = (await expectOk(call(`/api/v1/interventions?project_id=${project.id}`, { token: member.token }))).json;
    expect(byProject.map((i: { id: string }) => i.id)).toContain(id);
    const all = (await expectOk(call("/api/v1/interventions?status=pending", { token: member.token }))).json;
    expect(all.map((i: { id: string }) => i.id)).toContain(id);
    const answered = await expectOk(call(`/api/v1/interventions/${id}/respond`, { token: member.token, body: { response: "left" } }));
    expect(answered.json).toMatchObject({ id, status: "responded", response: "left" });
  });
});

describe("a task of a project on DB_1 known by its client's id", () => {
  it("is read by that id", async () => {
    const clientId = crypto.randomUUID();
    const body = { id: clientId, type: "parse_recipe", payload: { url: "https://example.com" }, project_id: project.id };
    const created = await expectOk(call(T, { apiKey: worker.apiKey, body }), 201);
    const read = (await expectOk(call(`${T}/${clientId}`, { apiKey: worker.apiKey }))).json;
    expect(read).toMatchObject({ id: created.json.id, client_id: clientId, project_id: project.id });
  });
});

describe("a heartbeat", () => {
  const copyOn = (d1: D1Database, id: string) =>
    d1
      .prepare("SELECT last_heartbeat, capabilities FROM servers WHERE id = ?1")
      .bind(id)
      .first<{ last_heartbeat: string | null; capabilities: string | null }>();

  it("is copied to the other shards when a column changes, and its time once per half minute", async () => {
    const server = await registerAgent(admin, `beat-${crypto.randomUUID().slice(0, 6)}`);
    const beat = async (body: Record<string, unknown> = {}) =>
      (await expectOk(call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body }))).json.server_time as string;
    const bucket = (t: string) => Math.floor(Date.parse(t) / 30_000);
    for (let i = 0; i < 2; i++) {
      const [before, copied] = [(await copyOn(env.DB, server.id))!.last_heartbeat!, (await copyOn(env.DB_1!, server.id))!.last_heartbeat];
      const now = await beat();
      expect((await copyOn(env.DB, server.id))?.last_heartbeat).toBe(now);
      // Within the half minute of the heartbeat before, the copy stays as it was; in a new one it takes this one.
      const expected = bucket(now) === bucket(before) ? copied : now;
      await until(
        () => copyOn(env.DB_1!, server.id),
        (c) => c?.last_heartbeat === expected,
        `heartbeat ${i}'s copy`,
      );
    }
    // New capabilities are copied at once.
    await beat({ capabilities: { max_concurrent_tasks: 3 } });
    const copied = await until(
      () => copyOn(env.DB_1!, server.id),
      (c) => (c?.capabilities ?? "").includes('"max_concurrent_tasks":3'),
      "the capabilities' copy",
    );
    expect(JSON.parse(copied!.capabilities!)).toMatchObject({ max_concurrent_tasks: 3 });
  });
});

describe("a heartbeat whose copy fails", () => {
  it("is answered, and the copy is made again by the hourly sweep", async () => {
    const server = await registerAgent(admin, `fail-${crypto.randomUUID().slice(0, 6)}`);
    const trigger = `refuse_${server.id.replaceAll("-", "")}`;
    await env.DB_1!.prepare(`CREATE TRIGGER ${trigger} BEFORE UPDATE ON servers WHEN NEW.id = '${server.id}' BEGIN SELECT RAISE(ABORT, 'refused'); END`).run();
    try {
      await expectOk(call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body: { capabilities: { max_concurrent_tasks: 7 } } }));
      const copy = () => env.DB_1!.prepare("SELECT capabilities FROM servers WHERE id = ?1").bind(server.id).first<{ capabilities: string | null }>();
      expect((await copy())?.capabilities ?? "").not.toContain('"max_concurrent_tasks":7');
      await env.DB_1!.prepare(`DROP TRIGGER ${trigger}`).run();
      await mirrorServers(env);
      expect(JSON.parse((await copy())!.capabilities!)).toMatchObject({ max_concurrent_tasks: 7 });
    } finally {
      await env.DB_1!.prepare(`DROP TRIGGER IF EXISTS ${trigger}`).run();
    }
  });
});

describe("the A2A agent of a project on DB_1", () => {
  it("makes a task from a message and reads it back, with its list, from the shard", async () => {
    const a2a = async (method: string, params: unknown) => {
      const reply = await rpc(project.id, member.token, { jsonrpc: "2.0", id: 1, method, params });
      expect(reply.body.error, JSON.stringify(reply.body)).toBeUndefined();
      return reply.body.result;
    };
    const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "Work on the shard" }] };
    const { task } = await a2a("SendMessage", { message, configuration: { returnImmediately: true } });
    expect(await shardsHolding("tasks", task.id)).toEqual(["DB_1"]);
    expect((await a2a("GetTask", { id: task.id })).id).toBe(task.id);
    expect((await a2a("ListTasks", {})).tasks.map((t: { id: string }) => t.id)).toContain(task.id);
  });
});

describe("rows a move left behind on another shard", () => {
  it("are not listed twice to a caller of every project", async () => {
    const onDb = (await expectOk(call("/api/v1/projects", { token: admin, body: { name: "Moved to DB", shard: "DB" } }), 201)).json;
    const created = await expectOk(call("/api/v1/tasks", { token: admin, body: { title: "Once only", spec: "Do it", project_id: onDb.id } }), 201);
    // The old copies on DB_1 of a project moved to DB, not yet deleted.
    for (const table of ["projects", "tasks"]) {
      const row = (await env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?1`)
        .bind(table === "projects" ? onDb.id : created.json.id)
        .first())!;
      await env.DB_1!.batch(upsertStatements(env.DB_1!, table, ["id"], [row]));
    }
    expect(await shardsHolding("tasks", created.json.id)).toEqual(["DB", "DB_1"]);
    const listed = (await expectOk(call("/api/v1/tasks?limit=200", { token: admin }))).json.tasks as { id: string }[];
    expect(listed.filter((t) => t.id === created.json.id)).toHaveLength(1);
  });
});

describe("waiting tasks of a project on DB_1", () => {
  it("are offered when a server's heartbeat declares what they need, found on the shard", async () => {
    const language = `zig-${crypto.randomUUID().slice(0, 6)}`;
    const server = await registerAgent(admin, `offers-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const id = (
      await expectOk(
        call("/api/v1/tasks", { token: admin, body: { title: "Needs zig", spec: "Do it", project_id: project.id, requirements: { languages: [language] } } }),
        201,
      )
    ).json.id as string;
    expect((await expectOk(call(`/api/v1/tasks/${id}`, { token: admin }))).json.status).toBe("pending");
    // Its capabilities change: the hub offers the waiting tasks of its projects, on whichever shard they live.
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body: { capabilities: { languages: [language] } } }));
    const task = await until(
      async () => (await expectOk(call(`/api/v1/tasks/${id}`, { token: admin }))).json,
      (t) => t.status !== "pending",
      "the task's assignment",
    );
    expect(task.status).toBe("assigned");
    expect(task.assigned_server_id ?? task.assigned_server?.id).toBe(server.id);
  });
});
