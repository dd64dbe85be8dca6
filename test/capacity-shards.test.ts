/**
 * A server's capacity across shards: a server serving a project on DB and one on DB_1 never carries more active tasks
 * in sum than it takes, however many tasks both projects' rooms give it at once (its link holds room for each batch);
 * its waiting tasks go to it as its tasks finish. A server whose projects all live on one shard is never asked through
 * its link.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAdmin, call, registerAgent, until, type Reply } from "./helpers";
import { cli, expectOk, T } from "./task-world";
import { d1 } from "./move-world";

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

const newProject = async (name: string, shard: string) =>
  (await expectOk(call("/api/v1/projects", { token: admin, body: { name, shard } }), 201)).json as { id: string };

/** A server serving `projects`, reporting that it speaks `language` and takes `capacity` tasks at once. */
async function serverFor(name: string, projects: { id: string }[], language: string, capacity: number) {
  const server = await registerAgent(admin, `${name}-${crypto.randomUUID().slice(0, 6)}`, { project_ids: projects.map((p) => p.id) });
  await expectOk(
    call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body: { capabilities: { languages: [language], max_concurrent_tasks: capacity } } }),
  );
  return server;
}

const newTask = (projectId: string, language: string, title: string) =>
  call("/api/v1/tasks", { token: admin, body: { title, spec: "Do it", project_id: projectId, requirements: { languages: [language] } } });

const autoAssign = (id: string) => call(`/api/v1/tasks/${id}/auto-assign`, { token: admin, method: "POST" });

/** The server's tasks in `statuses`, read from both shards. */
async function tasksOf(serverId: string, statuses: string[]): Promise<string[]> {
  const read = (shard: string) =>
    d1(shard)
      .prepare("SELECT id FROM tasks WHERE assigned_server_id = ?1 AND status IN (SELECT value FROM json_each(?2))")
      .bind(serverId, JSON.stringify(statuses))
      .all<{ id: string }>();
  const [onDb, onShard] = await Promise.all([read("DB"), read("DB_1")]);
  return [...onDb.results, ...onShard.results].map((r) => r.id);
}
const activeOn = (serverId: string) => tasksOf(serverId, ["assigned", "planning", "running"]);

/** The requests the rooms made to other objects while answering (Server-Timing `room-do`), one per room call. */
const roomObjectRequests = (reply: Reply) =>
  [...(reply.headers.get("Server-Timing") ?? "").matchAll(/room-do;desc="requests=(\d+)"/g)].map((m) => Number(m[1]));

describe("a server serving projects on two shards", () => {
  it("never carries more than max_concurrent_tasks in sum while both projects' rooms give it tasks at once, and takes the rest as its tasks finish", async () => {
    const onDb = await newProject("Capacity on DB", "DB");
    const onShard = await newProject("Capacity on DB_1", "DB_1");
    const server = await serverFor("two-shards", [onDb, onShard], "cobol", 2);
    const capacity = 2;
    const perProject = 12;

    // Wave one: every task created and then offered to the server, all at once.
    const created = await Promise.all(
      Array.from({ length: perProject }, (_, i) =>
        [onDb, onShard].map(async (p) => {
          const reply = await expectOk(newTask(p.id, "cobol", `${p.id} ${i}`), 201);
          return { id: reply.json.id as string, offered: await autoAssign(reply.json.id) };
        }),
      ).flat(),
    );
    expect(created.filter((c) => c.offered.status !== 200)).toEqual([]);
    const ids = created.map((c) => c.id);
    expect((await activeOn(server.id)).length).toBeLessThanOrEqual(capacity);
    // Its room is taken: neither shard's rooms left it idle.
    await until(
      () => activeOn(server.id),
      (a) => a.length === capacity,
      "the server to be given its first tasks",
    );
    // Its link was asked: the rooms of both shards hold room through it.
    expect(created.flatMap((c) => roomObjectRequests(c.offered)).some((n) => n > 0)).toBe(true);

    // Wave two: every waiting task offered again at once, from both projects.
    const given = new Set(await activeOn(server.id));
    const offered = await Promise.all(ids.filter((id) => !given.has(id)).map(autoAssign));
    expect(offered.filter((r) => r.status !== 200)).toEqual([]);
    expect((await activeOn(server.id)).length).toBeLessThanOrEqual(capacity);

    // Then the server works: each wave starts and completes what it has at once; each completion offers its project's
    // waiting tasks, and a room its link refused is offered the server's room once it has some.
    // Every look while waiting for the server's next tasks checks its load too.
    const withinCapacity = async () => {
      const active = await activeOn(server.id);
      expect(active.length).toBeLessThanOrEqual(capacity);
      return active;
    };
    const finished = new Set<string>();
    for (let wave = 0; finished.size < ids.length; wave++) {
      expect(wave).toBeLessThan(4 * ids.length);
      const active = await until(
        withinCapacity,
        (a) => a.length === Math.min(capacity, ids.length - finished.size),
        `the server to be given more tasks (${finished.size} finished)`,
        20_000,
      );
      const done = await Promise.all(
        active.map(async (id) => {
          await expectOk(cli(server.apiKey, "POST", `${T}/${id}/start`));
          return cli(server.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" });
        }),
      );
      expect(done.map((r) => r.status)).toEqual(active.map(() => 200));
      for (const id of active) finished.add(id);
      expect((await activeOn(server.id)).length).toBeLessThanOrEqual(capacity);
    }
    expect((await tasksOf(server.id, ["done"])).sort()).toEqual([...ids].sort());
    expect(await activeOn(server.id)).toEqual([]);
  }, 120_000);
});

describe("a room whose offer a server's link refused", () => {
  it("is offered the server's room once a task on the other shard finishes", async () => {
    const onDb = await newProject("Refused on DB", "DB");
    const onShard = await newProject("Refused on DB_1", "DB_1");
    const server = await serverFor("refusing", [onDb, onShard], "ada", 1);
    const first = (await expectOk(newTask(onDb.id, "ada", "first"), 201)).json.id as string;
    expect((await expectOk(autoAssign(first))).json).toMatchObject({ status: "assigned" });
    // The other shard's room sees the server idle on its own shard; its link, counting both, says it is full.
    const waiting = (await expectOk(newTask(onShard.id, "ada", "waiting"), 201)).json.id as string;
    const refused = await expectOk(autoAssign(waiting));
    expect(refused.json).toEqual({ status: "no_match" });
    expect(roomObjectRequests(refused)[0]).toBeGreaterThan(0);
    // The first task's project has nothing waiting: only the link, looking again, offers the server's room to the other.
    await expectOk(cli(server.apiKey, "POST", `${T}/${first}/start`));
    await expectOk(cli(server.apiKey, "POST", `${T}/${first}/complete`, { result: "ok" }));
    await until(
      () => activeOn(server.id),
      (a) => a.length === 1 && a[0] === waiting,
      "the waiting task to be given the server's room",
      15_000,
    );
  });
});

describe("a server serving projects on one shard", () => {
  it("is given tasks without its link being asked, and its own shard's check keeps it within its capacity", async () => {
    const first = await newProject("One shard A", "DB_1");
    const second = await newProject("One shard B", "DB_1");
    const server = await serverFor("one-shard", [first, second], "fortran", 2);
    const ids = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => (await expectOk(newTask(i % 2 ? first.id : second.id, "fortran", `t ${i}`), 201)).json.id as string),
    );
    const offered = await Promise.all(ids.map(autoAssign));
    expect(offered.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(offered.filter((r) => r.json.status === "assigned")).toHaveLength(2);
    expect((await activeOn(server.id)).length).toBe(2);
    // No room's offer made a request to another object.
    expect(offered.map(roomObjectRequests)).toEqual(Array(6).fill([0]));
  });
});
