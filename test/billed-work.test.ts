/**
 * What the bill is made of, as the hub counts it: D1's rows read and written
 * (from D1's own `meta`, through every kind of call) and Durable Object
 * requests, per request in Server-Timing. The counting binding answers every
 * caller exactly as the binding itself does.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { countedD1, countingRoundTrips, noRoundTrips, type RoundTrips } from "../src/db/round-trips";
import { createProject, type Reply } from "./helpers";
import { cli, createWorld, expectOk, T, taskIn, type World } from "./task-world";

/** The request's entry `name` in Server-Timing, with its numbers by label. */
function timing(reply: Reply, name: string): Record<string, number> {
  const header = reply.headers.get("Server-Timing") ?? "";
  const entry = header.split(/,\s*(?=[\w-]+;)/).find((e) => e.startsWith(`${name};`));
  expect(entry, `Server-Timing: ${header}`).toBeTruthy();
  return Object.fromEntries([...entry!.matchAll(/([a-z][a-z\d ]*)=(\d+)/g)].map(([, label, n]) => [label!, Number(n)]));
}

/** Runs `work` on a counting binding, with what it counted. */
async function counted<T>(work: (db: D1Database) => Promise<T>): Promise<{ value: T; trips: RoundTrips }> {
  const trips = noRoundTrips();
  const value = await countingRoundTrips(trips, () => work(countedD1(env.DB)));
  return { value, trips };
}

beforeAll(async () => {
  await env.DB.batch([
    env.DB.prepare("CREATE TABLE IF NOT EXISTS meta_left (id INTEGER PRIMARY KEY, name TEXT, '1' TEXT)"),
    env.DB.prepare("CREATE TABLE IF NOT EXISTS meta_right (id INTEGER PRIMARY KEY, left_id INTEGER, name TEXT)"),
  ]);
  await env.DB.batch([
    env.DB.prepare("INSERT INTO meta_left (id, name, '1') VALUES (1, 'a', 'one'), (2, 'b', 'two'), (3, 'c', NULL)"),
    env.DB.prepare("INSERT INTO meta_right (id, left_id, name) VALUES (10, 1, 'x'), (11, 1, 'y'), (12, 2, 'z')"),
  ]);
});

describe("the counting binding", () => {
  // Duplicate column names (a join's two ids and names), and a column named like an array index.
  const JOIN =
    "SELECT meta_left.id, meta_left.name, meta_right.id, meta_right.name, meta_left.'1' FROM meta_left JOIN meta_right ON meta_right.left_id = meta_left.id ORDER BY meta_right.id";
  const NONE = "SELECT id, name FROM meta_left WHERE id > 100";

  it("answers first() and raw() exactly as the binding does, duplicate columns included", async () => {
    for (const sql of [JOIN, NONE]) {
      const { value } = await counted(async (db) => ({
        raw: await db.prepare(sql).raw(),
        rawNamed: await db.prepare(sql).raw({ columnNames: true }),
        first: await db.prepare(sql).first(),
        firstName: await db.prepare(sql).first("name"),
        all: (await db.prepare(sql).all()).results,
      }));
      expect(value).toEqual({
        raw: await env.DB.prepare(sql).raw(),
        rawNamed: await env.DB.prepare(sql).raw({ columnNames: true }),
        first: await env.DB.prepare(sql).first(),
        firstName: await env.DB.prepare(sql).first("name"),
        all: (await env.DB.prepare(sql).all()).results,
      });
    }
    // The join's rows keep both ids, in column order, and the column names say so.
    const { value: named } = await counted((db) => db.prepare(JOIN).raw({ columnNames: true }));
    expect(named[0]).toEqual(["id", "name", "id", "name", "1"]);
    expect(named[1]).toEqual([1, "a", 10, "x", "one"]);
    // A column that is not there is refused with the binding's own error.
    const missing = (db: D1Database) => db.prepare(JOIN).first("nope");
    const theirs = await missing(env.DB).catch((e: Error) => e.message);
    await expect(counted(missing)).rejects.toThrow(theirs as string);
  });

  it("counts the rows D1 reports for first(), all(), run() and batch(), and raw() once it knows the query's columns", async () => {
    const SIMPLE = "SELECT id, name FROM meta_right WHERE left_id = 1 ORDER BY id";
    const meta = (await env.DB.prepare(SIMPLE).all()).meta;
    expect(meta.rows_read).toBeGreaterThan(0);
    const exactly = { d1: 1, rowsRead: meta.rows_read, rowsWritten: 0, uncounted: 0, doRequests: 0 };
    expect((await counted((db) => db.prepare(SIMPLE).first())).trips).toEqual(exactly);
    expect((await counted((db) => db.prepare(SIMPLE).all())).trips).toEqual(exactly);
    // raw(): the query's first raw() in the isolate runs as itself, uncounted, and shows its columns can be rebuilt.
    const firstRaw = await counted((db) => db.prepare(`${SIMPLE} -- raw`).raw());
    expect(firstRaw.trips).toEqual({ ...exactly, rowsRead: 0, uncounted: 1 });
    const laterRaw = await counted((db) => db.prepare(`${SIMPLE} -- raw`).raw());
    expect(laterRaw.trips).toEqual(exactly);
    expect(laterRaw.value).toEqual(await env.DB.prepare(SIMPLE).raw());
    // A join's duplicate names (and a name like an index) cannot be rebuilt: such a raw() is never counted, and answers as D1 does.
    await counted((db) => db.prepare(JOIN).raw());
    const join = await counted((db) => db.prepare(JOIN).raw());
    expect(join.trips.uncounted).toBe(1);
    expect(join.value).toEqual(await env.DB.prepare(JOIN).raw());

    // A write, run and batched: the count is the sum of what D1 reported for each statement.
    const insert = (db: D1Database, id: number) => db.prepare("INSERT INTO meta_right (id, left_id, name) VALUES (?1, 3, 'w')").bind(id);
    const { value: ran, trips: ranTrips } = await counted((db) => insert(db, 20).run());
    expect(ran.meta.rows_written).toBeGreaterThan(0);
    expect(ranTrips.rowsWritten).toBe(ran.meta.rows_written);
    const { value: batched, trips: batchTrips } = await counted((db) =>
      db.batch([insert(db, 21), insert(db, 22), db.prepare("UPDATE meta_left SET name = 'cc' WHERE id = 3"), db.prepare(JOIN)]),
    );
    const sum = (key: "rows_read" | "rows_written") => batched.reduce((n, r) => n + r.meta[key], 0);
    expect(batchTrips).toEqual({ d1: 1, rowsRead: sum("rows_read"), rowsWritten: sum("rows_written"), uncounted: 0, doRequests: 0 });
    expect(sum("rows_written")).toBeGreaterThanOrEqual(3);
  });

  it("counts a session's calls too, and keeps its bookmark", async () => {
    const { value, trips } = await counted(async (db) => {
      const session = db.withSession("first-primary");
      const rows = await session.prepare("SELECT id FROM meta_left").all();
      return { rows: rows.results, bookmark: session.getBookmark() };
    });
    expect(value.rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    expect(value.bookmark).toEqual(expect.any(String));
    expect(trips.rowsRead).toBe((await env.DB.prepare("SELECT id FROM meta_left").all()).meta.rows_read);
  });
});

describe("Server-Timing", () => {
  let w: World;
  beforeAll(async () => {
    w = await createWorld("Billed work");
  });

  it("reports the rows a task's creation wrote, the same for the same request, and one call to its room", async () => {
    const create = () => cli(w.orchestrator.apiKey, "POST", T, { title: "Counted", spec: "Count it", project_id: w.project.id });
    const tasksOf = async () => (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE project_id = ?1").bind(w.project.id).first<number>("n"))!;
    await expectOk(create(), 201); // the key and the project are looked up once
    const before = await tasksOf();
    const [first, second] = [await expectOk(create(), 201), await expectOk(create(), 201)];
    expect(await tasksOf()).toBe(before + 2);
    for (const reply of [first, second]) {
      // The task row and its event at least, in the room's batch; the Worker itself writes nothing.
      expect(timing(reply, "room-d1")["rows written"]).toBeGreaterThanOrEqual(2);
      expect(timing(reply, "worker-d1")["rows written"]).toBe(0);
      expect(timing(reply, "worker-do").requests).toBe(1);
    }
    // Once the queries are known in the isolate, every call's rows are counted.
    expect(timing(second, "room-d1")["calls uncounted"]).toBe(0);
    expect(timing(second, "worker-d1")["calls uncounted"]).toBe(0);
    // The same rows written; the rows read may grow with the project (the next event's seq is read from its log).
    expect(timing(second, "room-d1")["rows written"]).toBe(timing(first, "room-d1")["rows written"]);
    // The existing entries keep their exact form.
    expect(first.headers.get("Server-Timing")).toMatch(/worker;desc="d1 queries=\d+"/);
    expect(first.headers.get("Server-Timing")).toMatch(/room;dur=[\d.]+;desc="d1 queries=\d+, operations=\d+"/);
  });

  it("counts a warm agent write's rows in the room, none in the Worker", async () => {
    const task = await taskIn(w, "assigned");
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
    expect(timing(started, "worker")["d1 queries"]).toBe(0);
    expect(timing(started, "worker-d1")).toEqual({ "rows read": 0, "rows written": 0, "calls uncounted": 0 });
    expect(timing(started, "worker-do").requests).toBe(1);
    const room = timing(started, "room-d1");
    expect(room["rows read"]).toBeGreaterThan(0);
    expect(room["rows written"]).toBeGreaterThan(0);
  });

  it("bills a task's change of status one row, two where it is assigned or finished, one for its event, and one roll-up row", async () => {
    const created = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Rows", spec: "Count them", project_id: w.project.id }), 201);
    const id = created.json.id as string;
    const assigned = await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: w.worker.name }));
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const completed = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "counted" } }));
    const written = (reply: Reply) => timing(reply, "room-d1")["rows written"];
    // The task (its row, its key, its project's index; no server or session yet), and its event: the log keeps no index
    // of a task's events (migration 0038). Every change of status also writes its roll-up row (open counts, the day's
    // finishes and the duration's bucket share one row per project, day and type: one row whatever figures move).
    const rollup = 1;
    expect(written(created)).toBe(3 + 1 + rollup);
    // Assigning and finishing: the task's row and its server's index entry (keyed by completed_at, not status); the event.
    // Starting changes no index key: the row alone. A task without a session writes nothing to the sessions' index, and
    // the event log keeps no rowid beside its key.
    expect(written(assigned)).toBe(2 + 1 + rollup);
    expect(written(completed)).toBe(2 + 1 + rollup);
    expect(written(started)).toBe(1 + 1 + rollup);
  });

  it("writes no dependency row for a completion: the dependent's shows resolved at the upstream's completed_at, and only its flag is written", async () => {
    const create = async (body: Record<string, unknown> = {}) =>
      (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Resolve", project_id: w.project.id, ...body }), 201)).json.id as string;
    const [up, other] = [await create(), await create()];
    const down = await create({ dependencies: [up, other].map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" })) });
    const finish = async (id: string) => {
      await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: w.worker.name }));
      await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
      return expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "done" } }));
    };
    const view = async (id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
    const written = (reply: Reply) => timing(reply, "room-d1")["rows written"];
    // Another upstream still holds the dependent back: the task, its server's entry, its event and its roll-up row,
    // nothing else.
    const rollup = 1;
    expect(written(await finish(up))).toBe(2 + 1 + rollup);
    const upDone = await view(up);
    expect((await view(down)).dependencies.find((d: { depends_on_task_id: string }) => d.depends_on_task_id === up)).toMatchObject({
      resolved: true,
      resolved_at: upDone.completed_at,
    });
    expect((await view(down)).blocked).toBe(true);
    // The last one: besides, the dependent's blocked flag and its task_unblocked event.
    expect(written(await finish(other))).toBe(2 + 1 + rollup + 1 + 1);
    const freed = await view(down);
    expect(freed.blocked).toBe(false);
    expect(freed.dependencies.map((d: { resolved: boolean }) => d.resolved)).toEqual([true, true]);
  });

  it("reads, to refuse a cycle, only what the new upstream depends on, not every dependency of its project", async () => {
    const readWith = async (unrelated: number) => {
      const project = await createProject(w.admin, `graph ${unrelated}`);
      const create = async (title: string) => (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: project.id }), 201)).json.id as string;
      const [task, upstream] = [await create("task"), await create("upstream")];
      // A chain of other tasks in the same project, each depending on the one before it.
      await env.DB.batch([
        env.DB.prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
           INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, created_at, updated_at)
           SELECT ?1 || ':' || i, ?1, 'other', '', 'feature', 'normal', 'pending', '[]', 'test', '[]', '2026', '2026' FROM n`,
        ).bind(project.id, unrelated),
        env.DB.prepare(
          `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
           INSERT INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, created_at)
           SELECT ?1 || ':' || i, ?1 || ':' || (i - 1), ?1, 'blocks', '2026' FROM n`,
        ).bind(project.id, unrelated),
      ]);
      const added = await expectOk(
        cli(w.orchestrator.apiKey, "POST", `${T}/${task}/dependencies`, { depends_on_task_id: upstream, dependency_type: "blocks" }),
        201,
      );
      return timing(added, "room-d1")["rows read"]!;
    };
    const [small, large] = [await readWith(2), await readWith(500)];
    // Reading every dependency of the project would add 499 rows.
    expect(Math.abs(large - small)).toBeLessThan(10);
  });

  it("counts a read's rows in the Worker, and no Durable Object request", async () => {
    await taskIn(w, "assigned");
    // A query's first raw() in an isolate goes uncounted (it learns the query's columns): the second read is counted whole.
    await expectOk(cli(w.worker.apiKey, "GET", `${T}/check`));
    const read = await expectOk(cli(w.worker.apiKey, "GET", `${T}/check`));
    expect(timing(read, "worker-d1")["calls uncounted"]).toBe(0);
    expect(timing(read, "worker-d1")["rows read"]).toBeGreaterThan(0);
    expect(timing(read, "worker-d1")["rows written"]).toBe(0);
    expect(timing(read, "worker-do").requests).toBe(0);
  });
});
