/**
 * Task shards: a project's tasks live on the shard recorded for it (DB, or DB_1 here); the room talks to that shard
 * only, and reads across projects (a server's poll and its list, a person's inbox, the projects overview, a task by
 * its id alone) ask each shard the caller's projects live on.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { addMember, bootstrapAdmin, call, createUser, expectProblem, registerAgent, until } from "./helpers";
import { connectDaemon } from "./fake-daemon";
import { cli, expectOk, openSession, T } from "./task-world";
import { shardsHolding } from "./move-world";

let admin: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
});

const newProject = async (name: string, shard?: string) =>
  (await expectOk(call("/api/v1/projects", { token: admin, body: { name, ...(shard ? { shard } : {}) } }), 201)).json as { id: string };

describe("placing a project", () => {
  it("records its shard at creation, shows it to admins only, and lets only an admin choose it", async () => {
    const placed = await newProject("Placed by default");
    const chosen = await newProject("Placed on DB_1", "DB_1");
    expect((await expectOk(call(`/api/v1/projects/${placed.id}`, { token: admin }))).json).toMatchObject({ shard: "DB", moving_to: null });
    expect((await expectOk(call(`/api/v1/projects/${chosen.id}`, { token: admin }))).json).toMatchObject({ shard: "DB_1" });
    // Its shard keeps a copy of its row, which its rows there hang from.
    expect(await shardsHolding("projects", chosen.id)).toEqual(["DB", "DB_1"]);
    expect(await shardsHolding("projects", placed.id)).toEqual(["DB"]);

    const member = await createUser(admin, "member");
    await addMember(admin, chosen.id, member.id);
    const seen = (await expectOk(call(`/api/v1/projects/${chosen.id}`, { token: member.token }))).json;
    expect(seen).not.toHaveProperty("shard");
    expectProblem(await call("/api/v1/projects", { token: member.token, body: { name: "Mine", shard: "DB_1" } }), 403, "FORBIDDEN");
    const unknown = await call("/api/v1/projects", { token: admin, body: { name: "Nowhere", shard: "DB_9" } });
    expectProblem(unknown, 422, "VALIDATION_FAILED");
    expect(unknown.json.errors[0].path).toBe("shard");
  });
});

describe("two projects on different shards, one server serving both", () => {
  it("writes each project's tasks on its own shard; the server's poll, list and socket see both", async () => {
    const onDb = await newProject("Served on DB", "DB");
    const onShard = await newProject("Served on DB_1", "DB_1");
    const server = await registerAgent(admin, `both-${crypto.randomUUID().slice(0, 6)}`);
    // The server's row is copied to every shard: the tasks and sessions there name it.
    expect(await shardsHolding("servers", server.id)).toEqual(["DB", "DB_1"]);
    const daemon = await connectDaemon(server.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    const sessions = [await openSession(server.apiKey, onDb.id, "worker"), await openSession(server.apiKey, onShard.id, "worker")];
    expect(await shardsHolding("sessions", sessions[0]!)).toEqual(["DB"]);
    expect(await shardsHolding("sessions", sessions[1]!)).toEqual(["DB_1"]);

    const ids: string[] = [];
    for (const project of [onDb, onShard]) {
      const created = await expectOk(call("/api/v1/tasks", { token: admin, body: { title: `In ${project.id}`, spec: "Do it", project_id: project.id } }), 201);
      ids.push(created.json.id);
      await expectOk(call(`/api/v1/tasks/${created.json.id}/assign`, { token: admin, body: { session_name: "worker" } }));
    }
    expect(await shardsHolding("tasks", ids[0]!)).toEqual(["DB"]);
    expect(await shardsHolding("tasks", ids[1]!)).toEqual(["DB_1"]);

    // Its socket got both assignments, each from its project's room.
    for (const id of ids) await daemon.next((f) => f.type === "task_assigned" && f.task_id === id);
    // Its poll and its list read both shards.
    const polled = (await expectOk(cli(server.apiKey, "GET", "/api/v1/servers/tasks/poll"))).json as { id: string }[];
    expect(polled.map((t) => t.id).sort()).toEqual([...ids].sort());
    const checked = (await expectOk(cli(server.apiKey, "GET", `${T}/check`))).json;
    expect(checked.tasks.map((t: { id: string }) => t.id).sort()).toEqual([...ids].sort());
    // A task read by its id alone is found on its shard, with its timeline.
    const read = (await expectOk(call(`/api/v1/tasks/${ids[1]}`, { token: admin }))).json;
    expect(read).toMatchObject({ id: ids[1], project_id: onShard.id, status: "assigned" });
    const events = (await expectOk(call(`/api/v1/projects/${onShard.id}/events`, { token: admin }))).json.events as { type: string; task_id: string }[];
    expect(events.filter((e) => e.task_id === ids[1]).map((e) => e.type)).toEqual(expect.arrayContaining(["task_created", "task_assigned"]));

    // Its sessions are listed from both shards, and one on DB_1 is where a new task comes from.
    const listed = (await expectOk(cli(server.apiKey, "GET", "/api/v1/server/sessions"))).json.sessions as { id: string }[];
    expect(listed.map((s) => s.id).sort()).toEqual([...sessions].sort());
    const fromSession = await expectOk(cli(server.apiKey, "POST", T, { title: "From a session on DB_1", spec: "Go", session_id: sessions[1] }), 201);
    expect(fromSession.json.project_id).toBe(onShard.id);

    // A template kept on the project's shard, and instantiated by its room there.
    const template = await expectOk(
      call(`/api/v1/projects/${onShard.id}/templates`, {
        token: admin,
        body: {
          name: "pair",
          tasks: [
            { key: "a", title: "First" },
            { key: "b", title: "Then", dependencies: [{ on: "a", dependency_type: "blocks" }] },
          ],
        },
      }),
      201,
    );
    expect(await shardsHolding("templates", template.json.id)).toEqual(["DB_1"]);
    const run = await expectOk(call(`/api/v1/projects/${onShard.id}/templates/${template.json.id}/instantiate`, { token: admin, body: {} }), 201);
    expect(run.json.tasks.map((t: { title: string }) => t.title)).toEqual(["First", "Then"]);
    expect((await expectOk(call(`/api/v1/projects/${onShard.id}/templates`, { token: admin }))).json.templates).toHaveLength(1);

    // The agent works it through its room on the shard.
    await expectOk(cli(server.apiKey, "POST", `/api/v1/servers/tasks/${ids[1]}/start`));
    await expectOk(cli(server.apiKey, "POST", `/api/v1/servers/tasks/${ids[1]}/complete`, { result: { summary: "done on DB_1" } }));
    expect((await expectOk(call(`/api/v1/tasks/${ids[1]}`, { token: admin }))).json.status).toBe("done");
    daemon.ws.close();
  });
});

describe("a person in three projects on three shards", () => {
  it("sees each one's waiting tasks in the inbox and each one in the projects overview", async () => {
    const member = await createUser(admin, "member");
    const agent = await registerAgent(admin, `asker-${crypto.randomUUID().slice(0, 6)}`);
    const projects = [await newProject("Inbox A", "DB"), await newProject("Inbox B", "DB_1"), await newProject("Inbox C", "DB_2")];
    expect(await Promise.all(projects.map(async (p) => (await expectOk(call(`/api/v1/projects/${p.id}`, { token: admin }))).json.shard))).toEqual([
      "DB",
      "DB_1",
      "DB_2",
    ]);
    const waiting: string[] = [];
    for (const project of projects) {
      await addMember(admin, project.id, member.id);
      const on = await expectOk(call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: admin, body: { settings: { approve_agent_tasks: true } } }));
      expect(on.json.settings.approve_agent_tasks).toBe(true);
      const created = await expectOk(cli(agent.apiKey, "POST", T, { title: "Needs a yes", spec: "Wait", project_id: project.id }), 201);
      expect(created.json.awaiting_approval).toBe(true);
      waiting.push(created.json.id);
    }
    const inbox = (await expectOk(call("/api/v1/inbox", { token: member.token }))).json;
    expect(inbox.items.map((i: { task: { id: string } }) => i.task.id).sort()).toEqual([...waiting].sort());
    expect((await expectOk(call("/api/v1/inbox/count", { token: member.token }))).json.unread).toBe(3);

    const glances = (await expectOk(call("/api/v1/projects/overview", { token: member.token }))).json.projects as {
      project_id: string;
      open_tasks: number;
      questions_waiting: number;
    }[];
    expect(glances.map((g) => g.project_id).sort()).toEqual(projects.map((p) => p.id).sort());
    for (const g of glances) expect(g).toMatchObject({ open_tasks: 1, questions_waiting: 1 });
  });
});

describe("a webhook of a project on DB_1", () => {
  it("is delivered from its shard's outbox", async () => {
    const receiver = inject("receiver");
    const project = await newProject("Hooked on DB_1", "DB_1");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(
      call(`/api/v1/projects/${project.id}/webhooks`, { token: admin, body: { url: `${receiver}/hooks/${name}`, events: ["task_created"] } }),
      201,
    );
    await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200, delayMs: 0 }) });
    expect(await shardsHolding("webhooks", hook.json.id)).toEqual(["DB_1"]);
    const created = await expectOk(call("/api/v1/tasks", { token: admin, body: { title: "Tell the hook", spec: "Go", project_id: project.id } }), 201);
    const got = await until(
      async () =>
        (
          (await (await fetch(`${receiver}/control/${name}`, { method: "POST", body: "{}" })).json()) as {
            received: { body: { type: string; data: { task_id?: string; task?: { id: string } } } }[];
          }
        ).received,
      (r) => r.length > 0,
      "the delivery",
    );
    expect(got.map((m) => m.body.type)).toEqual(["task_created"]);
    expect(JSON.stringify(got[0]!.body.data)).toContain(created.json.id);
    const outbox = await env.DB_1!.prepare("SELECT status FROM outbox WHERE target_id = ?1").bind(hook.json.id).first<{ status: string }>();
    expect(outbox?.status).toBe("delivered");
  });
});
