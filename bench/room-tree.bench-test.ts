/**
 * The tree scenario without HTTP: 1,000 leaves → 100 → 10 → 1 root, created
 * and driven to done through ProjectRoom RPC calls, beside the same runtime
 * doing one D1 insert per call; then the same tree again in a project where
 * 10,000 blocked tasks wait ahead of it; then the same tree in 16 projects at
 * once, worked by the same agents, for the rows per second one D1 takes from
 * many rooms writing together. Prints one `BENCH {...}` line.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { newTask, type RoomActor, type RoomCommand, type RoomResult } from "../src/room/commands";

const LEVELS = [1000, 100, 10, 1];
const AGENTS = 8;
const CAPACITY = 25;
const BASELINE_CALLS = 2000;
/** Tasks waiting, blocked, in the project of the tree's second run. */
const BACKLOG = 10_000;
/** Projects driving the tree at once in the third run: one D1 database, a writer (a room) per project. */
const PROJECTS = 16;

async function baselineInsertsPerSecond() {
  await env.DB.prepare("CREATE TABLE IF NOT EXISTS bench_items (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at TEXT NOT NULL)").run();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < BASELINE_CALLS) {
        await env.DB.prepare("INSERT INTO bench_items (id, body, created_at) VALUES (?1, ?2, ?3)")
          .bind(crypto.randomUUID(), "{}", new Date().toISOString())
          .run();
      }
    }),
  );
  return BASELINE_CALLS / ((performance.now() - started) / 1000);
}

type Agent = { id: string; name: string };

/** The servers that work the tree: they serve every project, so both runs share them. */
async function registerAgents(): Promise<Agent[]> {
  const now = new Date().toISOString();
  const agents = Array.from({ length: AGENTS }, (_, i) => ({ id: crypto.randomUUID(), name: `room-agent-${i}` }));
  for (const a of agents) {
    await env.DB.prepare("INSERT INTO servers (id, name, hostname, capabilities, last_heartbeat, created_at, updated_at) VALUES (?1, ?2, ?2, ?3, ?4, ?4, ?4)")
      .bind(a.id, a.name, JSON.stringify({ languages: ["bench"], max_concurrent_tasks: CAPACITY }), now)
      .run();
  }
  return agents;
}

/** Operations committed together share their cost: each is charged its share. */
type PerOp = Record<string, { n: number; ms: number; batchMs: number; q: number; rowsRead: number; rowsWritten: number; group: number }>;

/** The tree created in a new project, with `backlog` tasks waiting (ahead of it, blocked by a task that never ends). */
async function createTree(backlog: number) {
  const now = new Date().toISOString();
  const projectId = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'bench', ?1, ?2, ?2)").bind(projectId, now).run();
  if (backlog > 0) await addBacklog(projectId, backlog);
  const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
  const person: RoomActor = { kind: "person", userId: "bench", label: "bench" };
  const perOp: PerOp = {};
  const run = async (actor: RoomActor, command: RoomCommand) => {
    const result = (await room.execute(actor, command)) as unknown as RoomResult;
    const o = (perOp[command.op] ??= { n: 0, ms: 0, batchMs: 0, q: 0, rowsRead: 0, rowsWritten: 0, group: 0 });
    const { ms, batchMs, d1Queries, rowsRead, rowsWritten, operations } = result.metrics;
    o.n++;
    o.ms += ms / operations;
    o.batchMs += batchMs / operations;
    o.q += d1Queries / operations;
    o.rowsRead += rowsRead / operations;
    o.rowsWritten += rowsWritten / operations;
    o.group += operations;
    if (!result.ok) throw new Error(`${command.op}: ${result.problem.detail}`);
    return result;
  };
  const task = (dependencyIds: string[]) => ({
    op: "create" as const,
    task: newTask({ title: "t", spec: "", type: "feature", priority: "normal", requirements: { languages: ["bench"] } }),
    dependencies: dependencyIds.map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" as const, contract_key: null })),
  });

  // Build the tree bottom-up; each parent depends on its 10 children.
  let level: string[] = [];
  const setupStarted = performance.now();
  for (const [depth, count] of LEVELS.entries()) {
    const children = level;
    level = [];
    for (let i = 0; i < count; i++) level.push((await run(person, task(depth === 0 ? [] : children.slice(i * 10, i * 10 + 10)))).taskId);
  }
  const setupSeconds = (performance.now() - setupStarted) / 1000;
  return { projectId, run, person, rootId: level[0]!, perOp, setupSeconds, tasks: LEVELS.reduce((a, b) => a + b, 0), done: false };
}
type Tree = Awaited<ReturnType<typeof createTree>>;

/**
 * Simulated agents drive the trees to done: each works on whatever is assigned to it, in whichever project, until
 * every root is done. Returns how long it took.
 */
async function driveTrees(agents: Agent[], trees: Tree[]) {
  const byProject = new Map(trees.map((t) => [t.projectId, t]));
  const started = performance.now();
  for (const tree of trees) await tree.run(tree.person, { op: "sweep" });
  let rootsLeft = trees.length;
  await Promise.all(
    agents.map(async (agent) => {
      const actor: RoomActor = { kind: "agent", serverId: agent.id, serverName: agent.name, label: `agent:${agent.name}` };
      while (rootsLeft > 0) {
        // As an agent's check for work asks (unfinished tasks only: the server's index holds them first).
        const { results } = await env.DB.prepare(
          "SELECT id, project_id FROM tasks WHERE assigned_server_id = ?1 AND completed_at IS NULL AND status = 'assigned'",
        )
          .bind(agent.id)
          .all<{ id: string; project_id: string }>();
        if (results.length === 0) {
          // A room offers its waiting tasks as its own tasks end: capacity another project's room freed reaches it as the
          // hub's heartbeat brings it (a server with room to spare has its projects offer theirs: offerWaitingTasks).
          if (trees.length > 1) await Promise.all(trees.filter((t) => !t.done).map((t) => t.run(t.person, { op: "sweep" })));
          await new Promise((r) => setTimeout(r, trees.length > 1 ? 20 : 1));
          continue;
        }
        await Promise.all(
          results.map(async ({ id, project_id }) => {
            const tree = byProject.get(project_id)!;
            await tree.run(actor, { op: "start", taskId: id });
            await tree.run(actor, { op: "complete", taskId: id, result: { summary: "ok" }, structured: false, warnings: [] });
            if (id === tree.rootId) {
              tree.done = true;
              rootsLeft--;
            }
          }),
        );
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const tree of trees) {
    const { done } = (await env.DB.prepare("SELECT count(*) AS done FROM tasks WHERE project_id = ?1 AND status = 'done'")
      .bind(tree.projectId)
      .first<{ done: number }>())!;
    expect(done).toBe(tree.tasks);
  }
  return seconds;
}

/** The rows a tree's operations wrote, all of them or only those of its drive (starts, completions and sweeps). */
const rowsWritten = (tree: Tree, ops = Object.keys(tree.perOp)) => ops.reduce((sum, op) => sum + (tree.perOp[op]?.rowsWritten ?? 0), 0);
const DRIVE = ["sweep", "start", "complete"];

/** One tree alone in its project, with `backlog` tasks ahead of it: how fast, and what its operations cost. */
async function driveTree(agents: Agent[], backlog: number) {
  const tree = await createTree(backlog);
  const seconds = await driveTrees(agents, [tree]);
  const drive = ["start", "complete"].map((op) => tree.perOp[op]!);
  const rowsReadPerTask = drive.reduce((sum, o) => sum + o.rowsRead / o.n, 0);
  return {
    tasks: tree.tasks,
    seconds,
    tasksPerSecond: tree.tasks / seconds,
    setupSeconds: tree.setupSeconds,
    rowsReadPerTask,
    rowsWrittenPerTask: rowsWritten(tree) / tree.tasks,
    rowsWrittenPerSecond: rowsWritten(tree, DRIVE) / seconds,
    perOp: tree.perOp,
  };
}

/**
 * The tree in `projects` projects at once, created together and then driven together by the same agents: one D1 for
 * every room. What D1 takes from them: tasks and rows written per second, creating and driving.
 */
async function manyProjects(agents: Agent[], projects: number) {
  // D1 reports the database's size after each query: what the trees add to it, per task.
  const size = async () => (await env.DB.prepare("SELECT 1").run()).meta.size_after;
  const sizeBefore = await size();
  const createStarted = performance.now();
  const trees = await Promise.all(Array.from({ length: projects }, () => createTree(0)));
  const createSeconds = (performance.now() - createStarted) / 1000;
  const seconds = await driveTrees(agents, trees);
  const tasks = trees.reduce((sum, t) => sum + t.tasks, 0);
  const created = trees.reduce((sum, t) => sum + rowsWritten(t, ["create"]), 0);
  const driven = trees.reduce((sum, t) => sum + rowsWritten(t, DRIVE), 0);
  const bytesPerTask = ((await size()) - sizeBefore) / tasks;
  return {
    projects,
    tasks,
    seconds,
    tasksPerSecond: tasks / seconds,
    rowsWrittenPerSecond: driven / seconds,
    createSeconds,
    createdRowsPerSecond: created / createSeconds,
    rowsWrittenPerTask: (created + driven) / tasks,
    bytesPerTask,
  };
}

/** `count` pending tasks with the tree's requirements, created before it and blocked by a task that runs for ever. */
async function addBacklog(projectId: string, count: number) {
  const blocker = crypto.randomUUID();
  const columns = "project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, requirements, created_at, updated_at";
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO tasks (id, ${columns}) VALUES (?1, ?2, 'blocker', '', 'feature', 'normal', 'running', '[]', 'bench', '[]', NULL, '2000', '2000')`,
    ).bind(blocker, projectId),
    env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO tasks (id, ${columns}) SELECT ?1 || ':' || i, ?1, 'waiting', '', 'feature', 'normal', 'pending', '[]', 'bench', '[]', ?2, '2000', '2000' FROM n`,
    ).bind(projectId, JSON.stringify({ languages: ["bench"] }), count),
    env.DB.prepare(
      `INSERT INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, created_at)
       SELECT id, ?2, ?1, 'blocks', '2000' FROM tasks WHERE project_id = ?1 AND title = 'waiting'`,
    ).bind(projectId, blocker),
  ]);
}

it("drives the tree through the room, alone in its project, beside a backlog of blocked tasks, and in many projects at once", async () => {
  const agents = await registerAgents();
  const alone = await driveTree(agents, 0);
  const beside = await driveTree(agents, BACKLOG);
  // Many projects at once: each room is its project's only writer, and every one of them writes to the same D1.
  const many = await manyProjects(agents, PROJECTS);
  const baseline = await baselineInsertsPerSecond();
  const round = (n: number) => Math.round(n * 100) / 100;
  console.log(
    `OPS ${JSON.stringify(Object.fromEntries(Object.entries(alone.perOp).map(([k, v]) => [k, { n: v.n, msPerOp: round(v.ms / v.n), batchMsPerOp: round(v.batchMs / v.n), queriesPerOp: round(v.q / v.n), rowsReadPerOp: round(v.rowsRead / v.n), committedWith: round(v.group / v.n) }])))}`,
  );
  const { perOp: _alone, ...tree } = alone;
  const { perOp: _beside, ...withBacklog } = beside;
  console.log(
    `BENCH ${JSON.stringify({ scenario: "room-tree", ...tree, backlog: { waiting: BACKLOG, ...withBacklog }, manyProjects: many, baselineInsertsPerSecond: baseline })}`,
  );
});
