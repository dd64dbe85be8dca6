#!/usr/bin/env node
/**
 * `npm run bench`: starts the hub and a baseline Worker (one D1 insert per
 * request) locally with wrangler, runs each scenario over HTTP, runs the
 * in-runtime room scenario with vitest, and prints every figure beside the
 * baseline measured in the same run.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { percentile } from "../bench/percentile.ts";
import { shardsBench } from "../bench/shards.ts";
import { shardBindings } from "./deploy-plan.mjs";
import type { FanoutRun } from "../bench/fanout-run.ts";
import { hubClient, type HubClient, type HubCredentials, type paths, type Schemas } from "../client/index.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const wrangler = `${root}node_modules/.bin/wrangler`;
const state = `${root}.wrangler/bench`;
const HUB_PORT = Number(process.env.BENCH_HUB_PORT || 8890);
const BASELINE_PORT = Number(process.env.BENCH_BASELINE_PORT || 8891);
const hub = `http://127.0.0.1:${HUB_PORT}`;
const baselineUrl = `http://127.0.0.1:${BASELINE_PORT}`;
const BOOTSTRAP = "bench-bootstrap-token";

/** `npm run bench -- tree dataref` runs only the named scenarios: fan-out, fan-in, tree, costs, costs-model, permlog, usage, files, mcp, sockets, dataref, dashboard, workerd (with its BullMQ peer), transfer, tunnel, shards. */
const only = new Set(process.argv.slice(2));
const wanted = (scenario: string) => only.size === 0 || only.has(scenario);

// The hub serves the dashboard from web/dist: build it first.
execFileSync(process.execPath, [`${root}scripts/build-web.mjs`], { cwd: root, stdio: "inherit" });

const children: ChildProcess[] = [];
process.on("exit", () => children.forEach((c) => c.kill("SIGTERM")));
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

/**
 * CPU time (ms) spent so far by a `wrangler dev` and the processes it runs
 * (workerd serving the Worker, its Durable Objects and local D1; the proxy in
 * front of it). Linux only: null where /proc is missing.
 */
const CLOCK_TICKS = existsSync("/proc/self/stat") ? Number(execFileSync("getconf", ["CLK_TCK"]).toString()) : 0;
function cpuMs(child: ChildProcess): number | null {
  if (!CLOCK_TICKS) return null;
  const ticks = (pid: string | number) => {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return 0; // gone
    }
  };
  const tree = (pid: string | number): (string | number)[] => {
    let kids: string[] = [];
    try {
      kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    } catch {
      // gone
    }
    return [pid, ...kids.flatMap(tree)];
  };
  return (tree(child.pid!).reduce((sum: number, pid) => sum + ticks(pid), 0) * 1000) / CLOCK_TICKS;
}

const TRANSFER_BENCH = "bench/transfer.bench-test.ts";
const TUNNEL_BENCH = "bench/tunnel.bench-test.ts";
const RSS_SAMPLE_MS = 25;

/** Resident memory (bytes) of the workerd processes under `pid`: the runtime vitest starts for the in-runtime benches. */
function workerdRss(pid: number): number {
  let total = 0;
  const visit = (p: string) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      if (/^Name:\s+workerd$/m.test(status)) total += Number(status.match(/^VmRSS:\s+(\d+) kB$/m)?.[1] ?? 0) * 1024;
      for (const task of readdirSync(`/proc/${p}/task`)) {
        for (const kid of readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) visit(kid);
      }
    } catch {
      // gone
    }
  };
  visit(String(pid));
  return total;
}

/** Runs one in-runtime bench file, sampling workerd's resident memory meanwhile (with the epoch time of each sample). */
function sampledVitest(file: string): Promise<{ out: string; samples: { at: number; rss: number }[] }> {
  const child = spawn(`${root}node_modules/.bin/vitest`, ["run", "--config", "vitest.bench.config.ts", file], {
    cwd: root,
    env: { ...process.env, FORCE_COLOR: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const samples: { at: number; rss: number }[] = [];
  const timer = setInterval(() => samples.push({ at: Date.now(), rss: workerdRss(child.pid!) }), RSS_SAMPLE_MS);
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => {
      clearInterval(timer);
      if (code === 0) resolve({ out, samples });
      else reject(new Error(`vitest exited with ${code}:\n${out.slice(-2000)}`));
    }),
  );
}

/** Lets the wrangler processes shut down cleanly rather than dying with their parent. */
function stopWorkers() {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGINT");
          setTimeout(resolve, 5000);
        }),
    ),
  );
}

function startWorker(args: string[], port: number) {
  const child = spawn(
    wrangler,
    ["dev", "--port", String(port), "--inspector-port", String(port + 1000), "--ip", "127.0.0.1", "--local", "--log-level", "error", ...args],
    {
      cwd: root,
      stdio: ["ignore", process.env.BENCH_WORKER_LOGS ? "inherit" : "ignore", "inherit"],
    },
  );
  children.push(child);
  return child;
}

async function waitFor(url: string) {
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not come up`);
}

/** The typed client (client/), calling the hub as this person or server: a path or field the hub's description lacks fails the typecheck. */
const hubAs = (credentials: HubCredentials = {}): HubClient => hubClient({ baseUrl: hub, ...credentials });
type HeartbeatBody = NonNullable<paths["/api/v1/servers/heartbeat"]["post"]["requestBody"]>["content"]["application/json"];
type NewTask = NonNullable<paths["/api/v1/server/tasks"]["post"]["requestBody"]>["content"]["application/json"];

/** A successful answer (its body and the response, whose Server-Timing the figures read), or an error naming what the hub said. */
async function ok<A extends { data?: unknown; error?: unknown; response: Response }>(pending: Promise<A>): Promise<Extract<A, { error?: never }>> {
  const answer = await pending;
  if (!answer.response.ok) throw new Error(`${answer.response.url}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer as Extract<A, { error?: never }>;
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Every event of a project after `since`, paging through the log. */
async function eventsOf(project: string, since = 0) {
  const all: Schemas["Event"][] = [];
  for (;;) {
    const page = (await ok(asAdmin.GET("/api/v1/projects/{id}/events", { params: { path: { id: project }, query: { limit: 1000, since: String(since) } } })))
      .data;
    all.push(...page.events);
    if (page.events.length < 1000) return all;
    since = page.next_since;
  }
}

const roomCost = (timing: string | null) => {
  const m = timing?.match(/room;dur=([\d.]+);desc="d1 queries=(\d+)/);
  return m ? { roomMs: Number(m[1]), d1Queries: Number(m[2]) } : { roomMs: NaN, d1Queries: NaN };
};
/** The Worker's own D1 round trips for a request, from its Server-Timing (beside the room's). */
const workerD1 = (timing: string | null) => Number(timing?.match(/worker;desc="d1 queries=(\d+)/)?.[1] ?? NaN);
const secondsSince = (t: number) => (performance.now() - t) / 1000;
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

/** CPU time (ms) this process has spent since `before`, a reading of process.cpuUsage(). */
const cpuMsSince = (before: NodeJS.CpuUsage) => {
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
};

/** CPU time (ms) per request of `proc` while `requests` of `run` are made, 32 at once. */
async function perRequest(proc: ChildProcess, requests: number, run: (i: number) => Promise<unknown>) {
  const before = cpuMs(proc)!;
  await pool(Array.from({ length: requests }), 32, (_, i) => run(i));
  return (cpuMs(proc)! - before) / requests;
}

/** One request to the baseline Worker, which must answer `status`; its body is read and dropped. */
async function baselineRequest(path: string, status: number, init?: RequestInit) {
  const res = await fetch(`${baselineUrl}${path}`, init);
  if (res.status !== status) throw new Error(`baseline answered ${res.status}`);
  await res.arrayBuffer();
}
/** One D1 insert (at /room, made by a Durable Object the request calls; at /room/logged, made by it with an event appended in the same batch). */
const baselineInsert = (path: "/" | "/room" | "/room/logged") => baselineRequest(path, 201, { method: "POST", body: "{}" });
const oneInsert = () => baselineInsert("/");
const oneInsertThroughRoom = () => baselineInsert("/room");
const loggedInsertThroughRoom = () => baselineInsert("/room/logged");
/** One D1 read, answered as a small JSON object: the hub's GET /health without the hub's Worker around it. */
const oneRead = () => baselineRequest("/read", 200);

async function baselineRate(requests: number, concurrency: number, request: () => Promise<void> = oneInsert) {
  const started = performance.now();
  await pool(Array.from({ length: requests }), concurrency, request);
  const seconds = secondsSince(started);
  return { seconds, perSecond: requests / seconds };
}

/** An agent's start or completion costs at most this times one insert through a Durable Object (CPU). */
const WRITE_TARGET = 1.2;
/** The HTTP tree reaches at least this share of the ceiling its two writes through a Durable Object per task set. */
const TREE_TARGET = 0.85;

// ── setup ────────────────────────────────────────────────────────────────
rmSync(state, { recursive: true, force: true });
console.log("• starting the hub and the baseline Worker");
// Every shard wrangler.toml declares gets every migration, as npm start does.
for (const shard of shardBindings(readFileSync(`${root}wrangler.toml`, "utf8"))) {
  execFileSync(wrangler, ["d1", "migrations", "apply", shard, "--local", "--persist-to", `${state}/hub`], {
    cwd: root,
    stdio: "ignore",
    env: { ...process.env, CI: "true" },
  });
}
const hubProcess = startWorker(
  [
    "--persist-to",
    `${state}/hub`,
    "--var",
    `JWT_SECRET:bench-${Date.now()}-secret-long-enough`,
    "--var",
    `BOOTSTRAP_TOKEN:${BOOTSTRAP}`,
    // Locally every log line crosses a pipe to wrangler's process, which production's Workers Logs do not: the
    // figures leave the per-request lines out (BENCH_LOG_LEVEL=info puts them back).
    "--var",
    `LOG_LEVEL:${process.env.BENCH_LOG_LEVEL ?? "warn"}`,
  ],
  HUB_PORT,
);
const baselineProcess = startWorker(["-c", "bench/baseline/wrangler.toml", "--persist-to", `${state}/baseline`], BASELINE_PORT);
await Promise.all([waitFor(`${hub}/api/v1/health`), waitFor(baselineUrl)]);

const adminCredentials = { email: "bench@example.com", password: "bench-password" };
const admin = (await ok(hubAs({ token: BOOTSTRAP }).POST("/api/v1/auth/bootstrap", { body: adminCredentials }))).data.access_token;
const asAdmin = hubAs({ token: admin });
const newProject = async (name: string) => (await ok(asAdmin.POST("/api/v1/projects", { body: { name } }))).data.id;
type Capabilities = NonNullable<HeartbeatBody["capabilities"]>;
interface Agent {
  id: string;
  name: string;
  apiKey: string;
  /** The hub as this agent calls it. */
  hub: HubClient;
}
const newAgent = async (name: string, capabilities?: Capabilities): Promise<Agent> => {
  const { token } = (await ok(asAdmin.POST("/api/v1/servers/tokens", { body: {} }))).data;
  const registered = (await ok(hubAs().POST("/api/v1/servers/register", { body: { name, hostname: name, registration_token: token } }))).data;
  const agent = { id: registered.id, name, apiKey: registered.api_key, hub: hubAs({ apiKey: registered.api_key }) };
  if (capabilities) await heartbeat(agent, capabilities);
  return agent;
};
const heartbeat = (agent: Agent, capabilities: Capabilities) => ok(agent.hub.POST("/api/v1/servers/heartbeat", { body: { capabilities } }));
const createTask = async (agent: Agent, body: NewTask) => (await ok(agent.hub.POST("/api/v1/server/tasks", { body }))).data.id;
const assignTo = (agent: Agent, id: string) =>
  ok(agent.hub.POST("/api/v1/server/tasks/{id}/assign", { params: { path: { id } }, body: { server_name: agent.name } }));
const start = (agent: Agent, id: string) => ok(agent.hub.POST("/api/v1/server/tasks/{id}/start", { params: { path: { id } } }));
const complete = (agent: Agent, id: string, result: string) =>
  ok(agent.hub.POST("/api/v1/server/tasks/{id}/complete", { params: { path: { id } }, body: { result } }));
const addNote = (agent: Agent, id: string, content: string) =>
  ok(agent.hub.POST("/api/v1/server/tasks/{id}/notes", { params: { path: { id } }, body: { content } }));

// Warm both up, then take the baseline.
await baselineRate(200, 16);
const baseline = await baselineRate(3000, 32);
const results: string[] = [];
const report = (line: string) => {
  results.push(line);
  console.log(line);
};
report(`baseline: one D1 insert per request over HTTP: ${fmt(baseline.perSecond, 0)} requests/s (3000 requests, 32 at once)`);

// ── (1) fan-out ─────────────────────────────────────────────────────────
if (wanted("fan-out")) {
  console.log("\n(1) fan-out: one completion unblocking K downstream tasks");
  const fanAgent = await newAgent("fan-out-agent", { max_concurrent_tasks: 1000 });
  const fanOut = [];
  for (const k of [1, 10, 100, 1000]) {
    const project = await newProject(`fan-out ${k}`);
    const upstream = await createTask(fanAgent, { title: "upstream", project_id: project });
    await assignTo(fanAgent, upstream);
    await start(fanAgent, upstream);
    await pool(Array.from({ length: k }), 16, () => createTask(fanAgent, { title: "downstream", project_id: project, dependency_ids: [upstream] }));
    const started = performance.now();
    const done = await complete(fanAgent, upstream, "done");
    const ms = performance.now() - started;
    const unblocked = (await eventsOf(project)).filter((e) => e.type === "task_unblocked").length;
    fanOut.push({ k, ms, unblocked, ...roomCost(done.response.headers.get("Server-Timing")) });
  }
  const k1 = fanOut[0]!;
  for (const f of fanOut) {
    report(
      `  K=${String(f.k).padStart(4)}: ${fmt(f.ms)} ms end to end (room ${fmt(f.roomMs)} ms), ${f.d1Queries} D1 queries, ${f.unblocked} unblocked` +
        `   | K=1: ${fmt(k1.ms)} ms, ${k1.d1Queries} queries; one insert: ${fmt(1000 / baseline.perSecond, 2)} ms`,
    );
  }
  const k1000 = fanOut.at(-1)!;
  report(
    `  → D1 queries per completion: K=1 ${k1.d1Queries}, K=1000 ${k1000.d1Queries} (${k1.d1Queries === k1000.d1Queries ? "same" : "DIFFERENT"}); K=1000 cascade ${fmt(k1000.ms)} ms (target < 2000 ms)`,
  );
}

// ── (2) fan-in race ─────────────────────────────────────────────────────
if (wanted("fan-in")) {
  console.log("\n(2) fan-in race: 100 upstream tasks completed at once, one downstream");
  {
    const project = await newProject("fan-in");
    const agent = await newAgent("fan-in-agent", { languages: ["rust"], max_concurrent_tasks: 1000 });
    const ups = await pool(Array.from({ length: 100 }), 16, () => createTask(agent, { title: "up", project_id: project }));
    const down = await createTask(agent, { title: "down", project_id: project, dependency_ids: ups, requirements: { languages: ["rust"] } });
    await pool(ups, 16, async (id) => {
      await assignTo(agent, id);
      await start(agent, id);
    });
    const started = performance.now();
    await Promise.all(ups.map((id) => complete(agent, id, "up")));
    const seconds = secondsSince(started);
    const events = (await eventsOf(project)).filter((e) => e.task_id === down);
    const assigned = events.filter((e) => e.type === "task_assigned").length;
    const unblocked = events.filter((e) => e.type === "task_unblocked").length;
    const inserts = await baselineRate(100, 100);
    report(
      `  100 concurrent completions: ${fmt(seconds * 1000)} ms; downstream unblocked ${unblocked}×, assigned ${assigned}× (${assigned === 1 && unblocked === 1 ? "exactly once" : "WRONG"})` +
        `   | 100 concurrent one-insert requests: ${fmt(inserts.seconds * 1000)} ms`,
    );
  }
}

// ── shards: 16 projects over 1, 2 and 4 shards (bench/shards.ts) ─────────
if (wanted("shards")) {
  console.log("\n(shards) 16 projects over 1, 2 and 4 shards, the same offered load (a hub of its own with four shard bindings)");
  await shardsBench({ root, wrangler, state, port: HUB_PORT + 2, startWorker, waitFor, report });
}

// ── (3) tree over HTTP ──────────────────────────────────────────────────
if (wanted("tree")) {
  console.log("\n(3) tree: 1,000 leaves → 100 → 10 → 1, driven to done by simulated agents");
  {
    const project = await newProject("tree");
    const AGENTS = 8;
    const CAPACITY = 25;
    const agents = await Promise.all(Array.from({ length: AGENTS }, (_, i) => newAgent(`tree-agent-${i}`)));
    const requirements = { languages: ["tree"] };
    const setupStarted = performance.now();
    const creator = agents[0]!;
    let level = await pool(Array.from({ length: 1000 }), 16, () => createTask(creator, { title: "leaf", project_id: project, requirements }));
    for (const count of [100, 10, 1]) {
      const children = level;
      level = await pool(Array.from({ length: count }), 16, (_, i) =>
        createTask(creator, { title: "node", project_id: project, requirements, dependency_ids: children.slice(i * 10, i * 10 + 10) }),
      );
    }
    const rootId = level[0]!;
    const setupSeconds = secondsSince(setupStarted);

    // The machine's speed drifts: the baseline is taken again right before and right after the drive, and the ratio uses their mean.
    const before = await baselineRate(3000, 32);
    let rootDone = false;
    let requests = 0;
    const hubCpuBefore = cpuMs(hubProcess);
    const clientCpuBefore = process.cpuUsage();
    const started = performance.now();
    // Declaring capabilities brings the agents' capacity online: waiting tasks are offered to them.
    await Promise.all(agents.map((a) => heartbeat(a, { languages: ["tree"], max_concurrent_tasks: CAPACITY })));
    await Promise.all(
      agents.map(async (a) => {
        while (!rootDone) {
          requests++;
          const { tasks } = (await ok(a.hub.GET("/api/v1/server/tasks/check"))).data;
          const ready = tasks.filter((t) => t.status === "assigned");
          if (ready.length === 0) {
            await new Promise((r) => setTimeout(r, 2));
            continue;
          }
          await Promise.all(
            ready.map(async (t) => {
              requests += 2;
              await start(a, t.id);
              await complete(a, t.id, "ok");
              if (t.id === rootId) rootDone = true;
            }),
          );
        }
      }),
    );
    const seconds = secondsSince(started);
    const hubCpu = hubCpuBefore === null ? null : cpuMs(hubProcess)! - hubCpuBefore;
    const clientCpu = cpuMsSince(clientCpuBefore);
    const after = await baselineRate(3000, 32);
    const near = (before.perSecond + after.perSecond) / 2;
    const tps = 1111 / seconds;
    report(
      `  HTTP: 1,111 tasks in ${fmt(seconds, 2)} s = ${fmt(tps)} tasks/s (${requests} requests, ${fmt(requests / seconds, 0)} requests/s; setup ${fmt(setupSeconds, 1)} s)` +
        `   | baseline right before and after: ${fmt(before.perSecond, 0)} and ${fmt(after.perSecond, 0)} requests/s → ratio ${fmt(tps / near, 2)}`,
    );
    // Each task is started and completed through its project's room: two writes through a Durable Object at least.
    const floorCpuBefore = cpuMs(baselineProcess);
    const floorClientBefore = process.cpuUsage();
    const FLOOR_REQUESTS = 3000;
    const throughRoom = await baselineRate(FLOOR_REQUESTS, 32, oneInsertThroughRoom);
    const floorCpu = floorCpuBefore === null ? null : cpuMs(baselineProcess)! - floorCpuBefore;
    const floorClientCpu = cpuMsSince(floorClientBefore);
    const ceiling = throughRoom.perSecond / 2 / near;
    const ofCeiling = tps / near / ceiling;
    report(
      `  ceiling of a task's two writes through a Durable Object: one insert made by one, ${fmt(throughRoom.perSecond, 0)} requests/s, halved = ${fmt(ceiling, 2)} of the baseline` +
        ` (the tree's polls not counted) → the tree reached ${fmt(ofCeiling, 2)} of its ceiling (target ≥ ${TREE_TARGET}: ${ofCeiling >= TREE_TARGET ? "met" : "not met"})`,
    );
    // Both sides run on the same cores as this client: where the machine is busy throughout, each side's rate is
    // its cores over its CPU per task, so the ratio of the CPU they spend per task bounds the tree's share of its ceiling.
    if (hubCpu !== null && floorCpu !== null) {
      const treePerTask = hubCpu / 1111;
      const floorPerTask = (2 * floorCpu) / FLOOR_REQUESTS;
      const busy = (cpu: number, s: number) => fmt(cpu / 1000 / s, 2);
      report(
        `    what bounds it: the hub's processes spent ${fmt(treePerTask, 2)} ms of CPU a task in the tree (${fmt(hubCpu / requests, 2)} ms a request; each completion also assigns the agent its next task and unblocks parents);` +
          ` the two inserts through a Durable Object ${fmt(floorPerTask, 2)} ms → on a busy machine the tree reaches at most ${fmt(floorPerTask / treePerTask, 2)} of its ceiling;` +
          ` cores busy (of ${availableParallelism()}): the tree ${busy(hubCpu, seconds)} in the hub and ${busy(clientCpu, seconds)} in this client, the ceiling's run ${busy(floorCpu, throughRoom.seconds)} and ${busy(floorClientCpu, throughRoom.seconds)}`,
      );
    }
  }
}

// ── (3c) what one request costs ─────────────────────────────────────────
// What an agent's write costs the machine beside a one-insert request (target ≤ 1.2×), as CPU time of all the
// processes serving each side, so the machine's speed does not drift into it.
if (wanted("costs")) {
  console.log("\n(3c) CPU per request: the hub's processes beside the baseline's");
  if (!CLOCK_TICKS) console.log("  skipped: needs /proc");
  else {
    // Rounds alternate the baseline with the hub's requests, and each round's ratio is taken against the baseline
    // right before and after it: the machine's speed drifts between rounds, far less within one.
    const ROUNDS = 15;
    const PER_ROUND = 200;
    const N = ROUNDS * PER_ROUND;
    // A server holds at most 1,000 tasks: rounds take turns between three agents.
    const agents = await Promise.all(["cost-agent", "cost-agent-2", "cost-agent-3"].map((name) => newAgent(name, { max_concurrent_tasks: 1000 })));
    const agentOf = (round: number) => agents[round % agents.length]!;
    const idle = await newAgent("idle-agent", { max_concurrent_tasks: 1 });
    const project = await newProject("costs");
    const ids = await pool(Array.from({ length: N }), 16, (_, i) => createTask(agentOf(Math.floor(i / PER_ROUND)), { title: "cost", project_id: project }));
    await pool(ids, 16, (id, i) => assignTo(agentOf(Math.floor(i / PER_ROUND)), id));
    // Every one of these writes is warm: the key was looked up and each task's project learnt when it was created.
    const trips = { start: [] as number[], complete: [] as number[] };
    const tripsOf = async (into: number[], write: Promise<{ response: Response }>) => into.push(workerD1((await write).response.headers.get("Server-Timing")));
    const HEALTH = 0;
    const lines: [string, (round: number) => (i: number) => Promise<unknown>][] = [
      ["one D1 read, no auth (GET /health)", () => async () => (await fetch(`${hub}/api/v1/health`)).arrayBuffer()],
      // An agent with no tasks: its key's lookup and one read that finds nothing.
      ["API-key lookup and a read (GET /server/status)", () => () => ok(idle.hub.GET("/api/v1/server/status"))],
      ["agent start", (round) => (i) => tripsOf(trips.start, start(agentOf(round), ids[round * PER_ROUND + i]!))],
      ["agent complete", (round) => (i) => tripsOf(trips.complete, complete(agentOf(round), ids[round * PER_ROUND + i]!, "ok"))],
    ];
    // The baseline Worker's requests each round is set beside, taken right before and after it: the machine's speed
    // drifts as much for them as for the hub.
    //   insert: one D1 insert, the baseline request;
    //   floor: the same insert made by a Durable Object the request calls, the least any write through a room costs;
    //   logged: that insert with an event appended in the same batch, the least a task's change costs (every change
    //     leaves an event in its transaction);
    //   read: one D1 read answered as a small JSON object, GET /health without the hub's Worker around it.
    const sides = { insert: oneInsert, floor: oneInsertThroughRoom, logged: loggedInsertThroughRoom, read: oneRead };
    const taken = { insert: [] as number[], floor: [] as number[], logged: [] as number[], read: [] as number[] };
    const takeSides = async () => {
      for (const [side, request] of Object.entries(sides)) taken[side as keyof typeof sides].push(await perRequest(baselineProcess, PER_ROUND, request));
    };
    const around = (side: keyof typeof sides, round: number) => (taken[side][round]! + taken[side][round + 1]!) / 2;
    // Warm: the logged insert creates its tables on its first request.
    for (const request of Object.values(sides)) await pool(Array.from({ length: 50 }), 16, request);
    await takeSides();
    const measured = lines.map(() => ({ ms: [] as number[], ratios: [] as number[], overFloor: [] as number[], overLeast: [] as number[] }));
    const floor = { ms: [] as number[], ratios: [] as number[] };
    // What bounds a write: the logged insert, plus what the hub's Worker adds to any request (GET /health over the
    // baseline's same read: its middleware, its D1 session and the counting of its queries). The key's check an
    // agent's request also passes is left out, so the bound errs low.
    const least = { logged: [] as number[], hubWorker: [] as number[], ms: [] as number[], overFloor: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const ms = [];
      for (const [, run] of lines) ms.push(await perRequest(hubProcess, PER_ROUND, run(round)));
      await takeSides();
      const near = around("insert", round);
      const floorMs = around("floor", round);
      const loggedMs = around("logged", round);
      const hubWorker = ms[HEALTH]! - around("read", round);
      const leastMs = loggedMs + hubWorker;
      floor.ms.push(floorMs);
      floor.ratios.push(floorMs / near);
      least.logged.push(loggedMs / floorMs);
      least.hubWorker.push(hubWorker);
      least.ms.push(leastMs);
      least.overFloor.push(leastMs / floorMs);
      ms.forEach((m, i) => {
        measured[i]!.ms.push(m);
        measured[i]!.ratios.push(m / near);
        measured[i]!.overFloor.push(m / floorMs);
        measured[i]!.overLeast.push(m / leastMs);
      });
    }
    for (const [write, counts] of Object.entries(trips)) {
      report(
        `  Worker-side D1 round trips per warm agent ${write}: ${fmt(Math.max(...counts), 0)} at most, ${fmt(counts.reduce((a, b) => a + b, 0) / counts.length, 2)} on average over ${counts.length} (target 0; a key's lookup is kept 30 s, so a longer run looks it up again)`,
      );
    }
    const range = (xs: number[]) => `${fmt(Math.min(...xs), 2)}–${fmt(Math.max(...xs), 2)}`;
    const rounds = (xs: number[]) => xs.map((r) => fmt(r, 2)).join(", ");
    const median = (xs: number[]) => percentile(xs, 50);
    report(
      `  one-insert baseline request: ${fmt(median(taken.insert), 2)} ms of CPU (median of ${taken.insert.length} rounds of ${PER_ROUND}, ${range(taken.insert)})`,
    );
    report(
      `  one insert made by a Durable Object the request calls (the least a write through a room costs): ${fmt(median(floor.ms), 2)} ms of CPU = ${fmt(median(floor.ratios), 2)}× the baseline request` +
        `   | rounds: ${rounds(floor.ratios)}`,
    );
    report(
      `  what bounds an agent's write: the same insert with an event appended in its batch, made by that Durable Object, ${fmt(median(least.logged), 2)}× the insert through it` +
        ` (rounds: ${rounds(least.logged)}); what the hub's Worker adds to any request, GET /health over the same read made by the baseline Worker, ${fmt(median(least.hubWorker), 2)} ms a request` +
        ` (rounds: ${rounds(least.hubWorker)}) → the least a change to a task costs here, its key's check left out: ${fmt(median(least.ms), 2)} ms = ${fmt(median(least.overFloor), 2)}× the insert through a Durable Object` +
        `   | rounds: ${rounds(least.overFloor)}`,
    );
    lines.forEach(([label], i) => {
      const { ms, ratios, overFloor, overLeast } = measured[i]!;
      const write = label.startsWith("agent");
      report(
        `  ${label}: ${fmt(median(ms), 2)} ms of CPU = ${fmt(median(ratios), 2)}× the baseline request${write ? `, ${fmt(median(overFloor), 2)}× the insert through a Durable Object (target ≤ ${WRITE_TARGET}×: ${median(overFloor) <= WRITE_TARGET ? "met" : "not met"}), ${fmt(median(overLeast), 2)}× the least a change costs` : ""}` +
          `   | median of ${ROUNDS} rounds of ${PER_ROUND}, each against the baseline right before and after it: ${rounds(ratios)}` +
          (write ? `; against the insert through a Durable Object: ${rounds(overFloor)}; against the least a change costs: ${rounds(overLeast)}` : ""),
      );
    });
  }
}

// ── (3d) the cost model ─────────────────────────────────────────────────
// What a task costs on Cloudflare's bill, line by line at the published rates (bench/costs.ts), beside the figures
// recorded at the commit before #19's work (bench/costs-before.json), and the rows written per task beside the least
// this shape of the log writes. Part of `costs` too. BENCH_COSTS_RECORD=<path> writes this run's.
if (wanted("costs-model") || wanted("costs")) {
  console.log("\n(3d) cost model: 1,000 tasks (900 → 90 → 9 → 1) created, assigned, started and completed by an agent over HTTP");
  const { measureCosts, recordCosts, reportCosts } = await import("../bench/costs.ts");
  const figures = await measureCosts({ hub, admin, cpuMs: () => cpuMs(hubProcess), pool });
  const recordedAt = `${root}bench/costs-before.json`;
  reportCosts(figures, existsSync(recordedAt) ? JSON.parse(readFileSync(recordedAt, "utf8")) : undefined, report);
  if (process.env.BENCH_COSTS_RECORD) {
    const commit = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    recordCosts(process.env.BENCH_COSTS_RECORD, figures, commit, `npm run bench -- ${process.argv.slice(2).join(" ")}`.trim());
  }
}

// ── (3e) the permission log at volume ───────────────────────────────────
// 100,000 entries posted by 20 daemons at once, 500 a post (a busy daemon's 5 s flush): the rate they are stored at,
// D1 rows written per entry, and a task completion's p99 in the same project while they arrive beside the same
// completions without them (target ≤ 1.5×) and beside its floor: the same posts sent to a Worker that only parses them.
// Each project's log has one writer, so at most one batch of it is ever ahead of a task write in D1's queue.
if (wanted("permlog")) {
  console.log("\n(3e) permission log: 100,000 entries from 20 daemons at once, and task completions in the same project meanwhile");
  const DAEMONS = 20;
  const PER_POST = 500;
  const POSTS = 100_000 / PER_POST / DAEMONS;
  /** Completions timed per phase, one at a time, a few ms apart as an agent makes them. */
  const COMPLETIONS = 200;
  const GAP_MS = 5;
  const project = await newProject("permlog");
  const daemons = await Promise.all(
    Array.from({ length: DAEMONS }, async (_, i) => {
      const daemon = await newAgent(`permlog-daemon-${i}`);
      const session = (await ok(daemon.hub.POST("/api/v1/server/sessions", { body: { name: `busy-${i}`, project_id: project } }))).data.id;
      return { daemon, session };
    }),
  );
  const worker = await newAgent("permlog-worker", { max_concurrent_tasks: 3 * COMPLETIONS });
  const ready = await pool(Array.from({ length: 3 * COMPLETIONS }), 16, async () => {
    const id = await createTask(worker, { title: "work", project_id: project });
    await assignTo(worker, id);
    await start(worker, id);
    return id;
  });
  const TOOLS = [
    { tool_name: "Bash", tool_input: { command: "npm test -- --reporter=dot", description: "Run the tests" }, decision: "allowed" },
    { tool_name: "Read", tool_input: { file_path: "/home/dev/project/src/index.ts" }, decision: "allowed" },
    { tool_name: "Edit", tool_input: { file_path: "/home/dev/project/src/app.ts", old_string: "a", new_string: "b" }, decision: "asked" },
    { tool_name: "WebFetch", tool_input: { url: "https://example.com/docs" }, decision: "denied" },
  ] as const;
  /** One daemon's flush: what its hook logged, as hub.py posts it. */
  const flush = (session: string, post: number) =>
    Array.from({ length: PER_POST }, (_, i) => ({
      session_id: session,
      project_id: project,
      ...TOOLS[(post + i) % TOOLS.length]!,
      matched_rule_id: null,
      reason: null,
      agent_name: "claude",
      created_at: `${new Date(Date.now() - 60_000 + i).toISOString().slice(0, 19)}+00:00`,
    }));
  /** D1 rows the post wrote: the Worker's own statements, and its share of its projects' log writers' batches. */
  const rowsWritten = (timing: string | null) =>
    Number(timing?.match(/worker-d1;desc="rows read=\d+, rows written=(\d+)/)?.[1] ?? NaN) +
    Number(timing?.match(/log-d1;desc="rows written=([\d.]+)/)?.[1] ?? NaN);
  const workerMs = (timing: string | null) => Number(timing?.match(/worker-total;dur=([\d.]+)/)?.[1] ?? NaN);
  /** Completes the tasks one at a time until they run out or `stop` says so: each completion's ms end to end, in the Worker and in its room. */
  const completions = async (tasks: string[], stop: () => boolean) => {
    const ms: number[] = [];
    const inWorker: number[] = [];
    const inRoom: number[] = [];
    for (const id of tasks) {
      if (stop()) break;
      const t = performance.now();
      const done = await complete(worker, id, "ok");
      ms.push(performance.now() - t);
      const timing = done.response.headers.get("Server-Timing");
      inWorker.push(workerMs(timing));
      inRoom.push(roomCost(timing).roomMs);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    return { ms, inWorker, inRoom };
  };
  /** Every daemon posts its flushes one after another, all daemons at once, with `post`; completions are timed meanwhile. */
  const floodWith = async (tasks: string[], post: (daemon: (typeof daemons)[number], body: { entries: ReturnType<typeof flush> }) => Promise<void>) => {
    let flooding = true;
    const started = performance.now();
    const flood = Promise.all(
      daemons.map(async (d) => {
        for (let i = 0; i < POSTS; i++) await post(d, { entries: flush(d.session, i) });
      }),
    ).finally(() => (flooding = false));
    const timed = await completions(tasks, () => !flooding);
    await flood;
    return { ...timed, seconds: secondsSince(started) };
  };
  const quiet = await completions(ready.slice(0, COMPLETIONS), () => false);
  // The floor: the same posts sent to the baseline Worker, which only reads and parses them. What the completions
  // lose then is what carrying and parsing the bytes costs this machine (the client, the dev servers and workerd share it).
  const floor = await floodWith(ready.slice(COMPLETIONS, 2 * COMPLETIONS), (_, body) =>
    baselineRequest("/parse", 201, { method: "POST", body: JSON.stringify(body) }),
  );
  let accepted = 0;
  let written = 0;
  const before = await baselineRate(1000, 32);
  const during = await floodWith(ready.slice(2 * COMPLETIONS), async ({ daemon }, body) => {
    const answer = await ok(daemon.hub.POST("/api/v1/server/permissions/log", { body }));
    accepted += answer.data.accepted;
    written += rowsWritten(answer.response.headers.get("Server-Timing"));
  });
  const p99 = (phase: { ms: number[]; inWorker: number[]; inRoom: number[] }) => ({
    ms: percentile(phase.ms, 99),
    worker: percentile(phase.inWorker, 99),
    room: percentile(phase.inRoom, 99),
  });
  const [q, f, d] = [p99(quiet), p99(floor), p99(during)];
  report(
    `  ${accepted.toLocaleString("en")} entries in ${fmt(during.seconds, 2)} s = ${fmt(accepted / during.seconds, 0)} entries/s (${DAEMONS} daemons, ${POSTS} posts of ${PER_POST} each)` +
      `   | baseline right before: ${fmt(before.perSecond, 0)} one-insert requests/s`,
  );
  report(`  D1 rows written per entry: ${fmt(written / accepted, 2)} (target ≤ 2)`);
  report(
    `  task completion in the same project, p99: ${fmt(d.ms)} ms during the flood (${during.ms.length} completions), ${fmt(q.ms)} ms without it (${quiet.ms.length})` +
      ` → ${fmt(d.ms / q.ms, 2)}× (target ≤ 1.5×); p50 ${fmt(percentile(during.ms, 50))} and ${fmt(percentile(quiet.ms, 50))} ms` +
      `   | floor: ${fmt(f.ms)} ms while the same posts go to a Worker that only parses them (${floor.ms.length} completions, ${fmt(floor.seconds, 2)} s) → ${fmt(f.ms / q.ms, 2)}×`,
  );
  report(
    `    of which in the hub's Worker: ${fmt(d.worker)} ms during, ${fmt(q.worker)} ms without → ${fmt(d.worker / q.worker, 2)}× (floor ${fmt(f.worker / q.worker, 2)}×);` +
      ` in the room: ${fmt(d.room)} and ${fmt(q.room)} ms → ${fmt(d.room / q.room, 2)}× (floor ${fmt(f.room / q.room, 2)}×)`,
  );
}

// ── (3e') usage telemetry ─────────────────────────────────────────────
// 20 daemons' agents export their usage as Claude Code does (OTLP/HTTP JSON, cumulative sums of claude_code.cost.usage
// and claude_code.token.usage per model and token type: 10 points a post), each once a second, while tasks complete in
// the same project. Completion p99 beside the same run without the exports (target ≤ 1.2×), and the D1 rows the room's
// usage batches wrote per point (target ≤ 1).
if (wanted("usage")) {
  console.log("\n(3e') usage telemetry: 20 daemons exporting 10 points a second each, and task completions in the same project meanwhile");
  const DAEMONS = 20;
  // Enough for the p99 to rest on a few completions rather than one, and for the exports to run some 15 s.
  const COMPLETIONS = 300;
  const GAP_MS = 5;
  const EXPORT_MS = 1000;
  const MODELS = ["claude-sonnet-4-5", "claude-haiku-4-5"];
  const TOKEN_TYPES = ["input", "output", "cacheRead", "cacheCreation"];
  const project = await newProject("usage");
  const daemons = await Promise.all(
    Array.from({ length: DAEMONS }, async (_, i) => {
      const daemon = await newAgent(`usage-daemon-${i}`);
      const session = (await ok(daemon.hub.POST("/api/v1/server/sessions", { body: { name: `agent-${i}`, project_id: project } }))).data.id;
      // Each session is at work on a task, which its usage lands on.
      const task = await createTask(daemon, { title: `busy ${i}`, project_id: project });
      await ok(daemon.hub.POST("/api/v1/server/tasks/{id}/assign", { params: { path: { id: task } }, body: { session_name: `agent-${i}` } }));
      await start(daemon, task);
      return { daemon, session, exports: 0, startedNs: `${BigInt(Date.now()) * 1_000_000n}` };
    }),
  );
  const worker = await newAgent("usage-worker", { max_concurrent_tasks: 3 * COMPLETIONS });
  const ready = await pool(Array.from({ length: 3 * COMPLETIONS }), 16, async () => {
    const id = await createTask(worker, { title: "work", project_id: project });
    await assignTo(worker, id);
    await start(worker, id);
    return id;
  });
  const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });
  /** One export of a daemon's agent: its counters so far, as the OpenTelemetry SDK sends cumulative sums. */
  const exportOf = (d: (typeof daemons)[number]) => {
    const n = ++d.exports;
    const now = `${BigInt(Date.now()) * 1_000_000n}`;
    const point = (value: number, attributes: ReturnType<typeof attr>[]) => ({
      startTimeUnixNano: d.startedNs,
      timeUnixNano: now,
      asDouble: value,
      attributes: [attr("session.id", `agent-session-${d.session}`), ...attributes],
    });
    const sum = (name: string, unit: string, dataPoints: ReturnType<typeof point>[]) => ({
      name,
      unit,
      sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints },
    });
    return {
      resourceMetrics: [
        {
          resource: { attributes: [attr("service.name", "claude-code"), attr("orchestratia.session_id", d.session)] },
          scopeMetrics: [
            {
              scope: { name: "com.anthropic.claude_code", version: "2.0.0" },
              metrics: [
                sum(
                  "claude_code.cost.usage",
                  "USD",
                  MODELS.map((m) => point(0.01 * n, [attr("model", m)])),
                ),
                sum(
                  "claude_code.token.usage",
                  "tokens",
                  MODELS.flatMap((m) => TOKEN_TYPES.map((t) => point(100 * n, [attr("model", m), attr("type", t)]))),
                ),
              ],
            },
          ],
        },
      ],
    };
  };
  const POINTS_PER_EXPORT = MODELS.length * (1 + TOKEN_TYPES.length);
  const tallyOf = (timing: string | null) => {
    const m = timing?.match(/usage;desc="points=(\d+), rows written=(\d+)/);
    return m ? { points: Number(m[1]), rows: Number(m[2]) } : null;
  };
  let tally: { points: number; rows: number } | null = null;
  const exportTo = async (d: (typeof daemons)[number]) => {
    const res = await fetch(`${hub}/v1/metrics`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${d.daemon.apiKey}` },
      body: JSON.stringify(exportOf(d)),
    });
    if (res.status !== 200) throw new Error(`/v1/metrics answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
    tally = tallyOf(res.headers.get("Server-Timing")) ?? tally;
  };
  const completions = async (tasks: string[], stop: () => boolean) => {
    const ms: number[] = [];
    for (const id of tasks) {
      if (stop()) break;
      const t = performance.now();
      await complete(worker, id, "ok");
      ms.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
    return ms;
  };
  /** Every daemon exports once a second while the completions run; answers their times and the exports made. */
  const whileExporting = async (tasks: string[], send: (d: (typeof daemons)[number]) => Promise<void>) => {
    let running = true;
    let sent = 0;
    const exporting = Promise.all(
      daemons.map(async (d, i) => {
        await new Promise((r) => setTimeout(r, (i * EXPORT_MS) / DAEMONS));
        while (running) {
          const next = performance.now() + EXPORT_MS;
          await send(d);
          sent++;
          await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
        }
      }),
    );
    const ms = await completions(tasks, () => false);
    running = false;
    await exporting;
    return { ms, sent };
  };
  const quiet = await completions(ready.slice(0, COMPLETIONS), () => false);
  const floor = await whileExporting(ready.slice(COMPLETIONS, 2 * COMPLETIONS), (d) =>
    baselineRequest("/parse", 201, { method: "POST", body: JSON.stringify(exportOf(d)) }),
  );
  for (const d of daemons) d.exports = 0;
  const started = performance.now();
  const during = await whileExporting(ready.slice(2 * COMPLETIONS), exportTo);
  const seconds = secondsSince(started);
  // The last batch goes to D1 within about a second: one more export (no growth, so nothing more to count) reads the tally after it.
  await new Promise((r) => setTimeout(r, 2500));
  for (const d of daemons.slice(0, 1)) {
    d.exports--;
    await exportTo(d);
  }
  const [q, f, d] = [percentile(quiet, 99), percentile(floor.ms, 99), percentile(during.ms, 99)];
  const points = during.sent * POINTS_PER_EXPORT;
  report(
    `  ${points.toLocaleString("en")} usage points in ${during.sent} exports over ${fmt(seconds, 1)} s = ${fmt(points / seconds, 0)} points/s (${DAEMONS} daemons, ${POINTS_PER_EXPORT} points an export, one export a second each)`,
  );
  const t = tally as { points: number; rows: number } | null;
  report(
    `  D1 rows written per usage point: ${t ? fmt(t.rows / t.points, 3) : "n/a"} (${t?.rows ?? "?"} rows for ${t?.points ?? "?"} points; target ≤ 1` +
      ` against the floor of 1 row per point that storing each point would cost, before its index rows)`,
  );
  report(
    `  task completion in the same project, p99: ${fmt(d)} ms while exporting (${during.ms.length} completions), ${fmt(q)} ms without (${quiet.length})` +
      ` → ${fmt(d / q, 2)}× (target ≤ 1.2×); p50 ${fmt(percentile(during.ms, 50))} and ${fmt(percentile(quiet, 50))} ms` +
      `   | floor: ${fmt(f)} ms while the same exports go to a Worker that only parses them → ${fmt(f / q, 2)}×`,
  );
}

// ── (3f) the daemons' file polls ────────────────────────────────────────
// Every daemon asks for its pending uploads and downloads every 3 s (hub.py's two loops): 100 idle daemons do so at
// that cadence, while another daemon has transfers waiting. An empty poll's CPU beside the one-insert request
// (target ≤ 0.8×) and its D1 rows read (target ≤ 1).
if (wanted("files")) {
  console.log("\n(3f) files: 100 daemons' empty polls for uploads and downloads every 3 s, while another daemon has 40 transfers waiting");
  const DAEMONS = 100;
  const ROUNDS = 8;
  const CADENCE_MS = 3000;
  const project = await newProject("files");
  const busy = await newAgent("files-busy");
  const busySession = (await ok(busy.hub.POST("/api/v1/server/sessions", { body: { name: "busy", project_id: project } }))).data.id;
  await pool(Array.from({ length: 20 }), 8, async (_, i) => {
    const sent = await fetch(`${hub}/api/v1/projects/${project}/sessions/${busySession}/uploads`, {
      method: "POST",
      body: new Uint8Array(1024),
      headers: { Authorization: `Bearer ${admin}`, "X-Filename": `f${i}.bin` },
    });
    if (sent.status !== 201) throw new Error(`upload answered ${sent.status}`);
    await ok(
      asAdmin.POST("/api/v1/projects/{id}/sessions/{sid}/downloads", { params: { path: { id: project, sid: busySession } }, body: { path: `/tmp/f${i}` } }),
    );
  });
  const daemons = await pool(Array.from({ length: DAEMONS }), 8, (_, i) => newAgent(`files-idle-${i}`));
  const polls = daemons.flatMap((d) => [() => ok(d.hub.GET("/api/v1/server/files/pending")), () => ok(d.hub.GET("/api/v1/server/files/pulls/pending"))]);
  const d1 = { queries: 0, polls: 0, maxRowsRead: 0 };
  const rowsRead = (timing: string | null) => Number(timing?.match(/worker-d1;desc="rows read=(\d+)/)?.[1] ?? NaN);
  const poll = async (i: number) => {
    const timing = (await polls[i]!()).response.headers.get("Server-Timing");
    d1.queries += workerD1(timing);
    d1.polls++;
    d1.maxRowsRead = Math.max(d1.maxRowsRead, rowsRead(timing));
  };
  // Each daemon's key is looked up once, as its heartbeat does before its first poll.
  await pool(daemons, 16, (d) => ok(d.hub.GET("/api/v1/server/status")));
  if (!CLOCK_TICKS) console.log("  CPU skipped: needs /proc");
  else {
    const baselines = [await perRequest(baselineProcess, polls.length, oneInsert)];
    const rounds: { ms: number; ratio: number }[] = [];
    const nothing = async () => (await fetch(`${baselineUrl}/empty`)).arrayBuffer();
    const floor: number[] = [];
    // Round 0 reads D1 for every poll; the rounds after it come every 3 s, as hub.py's loops do.
    for (let round = 0; round <= ROUNDS; round++) {
      const began = performance.now();
      const ms = await perRequest(hubProcess, polls.length, poll);
      const nothingMs = await perRequest(baselineProcess, polls.length, nothing);
      baselines.push(await perRequest(baselineProcess, polls.length, oneInsert));
      const near = (baselines[round]! + baselines[round + 1]!) / 2;
      rounds.push({ ms, ratio: ms / near });
      floor.push(nothingMs / near);
      if (round === 0) Object.assign(d1, { queries: 0, polls: 0 });
      await new Promise((r) => setTimeout(r, Math.max(0, CADENCE_MS - (performance.now() - began))));
    }
    const [cold, ...steady] = rounds;
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    report(`  one-insert baseline request: ${fmt(percentile(baselines, 50), 2)} ms of CPU (median of ${baselines.length} rounds of ${polls.length})`);
    report(
      `  empty poll at hub.py's cadence: ${fmt(mean(steady.map((r) => r.ms)), 2)} ms of CPU = ${fmt(mean(steady.map((r) => r.ratio)), 2)}× the baseline request (target ≤ 0.8×)` +
        `   | mean of ${steady.length} rounds 3 s apart, each of ${DAEMONS} daemons polling both lists, against the baseline right before and after it: ${steady.map((r) => fmt(r.ratio, 2)).join(", ")}`,
    );
    report(
      `  the least a request costs here (the baseline Worker answering [] with no work): ${fmt(mean(floor), 2)}× the baseline request   | rounds: ${floor.map((r) => fmt(r, 2)).join(", ")}`,
    );
    report(
      `  empty poll that reads D1 (every poll of the first round): ${fmt(cold!.ms, 2)} ms of CPU = ${fmt(cold!.ratio, 2)}× the baseline request` +
        `; at that cadence ${fmt(d1.queries / d1.polls, 2)} D1 queries per poll (an isolate reads a server's lists at most every 10 s)`,
    );
  }
  await pool(Array.from({ length: polls.length }), 32, (_, i) => poll(i));
  report(`  D1 rows read by an empty poll: ${fmt(d1.maxRowsRead, 0)} at most (target ≤ 1)`);
}

// ── (3g) the MCP endpoint ───────────────────────────────────────────────
// A tool call is its REST request made from inside the Worker: what it adds is the JSON-RPC envelope, the MCP server
// built for the request, and the inner request's pass through the app. CPU per call (all of wrangler dev's processes,
// from /proc) beside the same request over REST, each in blocks taking turns; target ≤ 1.2×.
if (wanted("mcp")) {
  console.log("\n(3g) MCP: a tool call's CPU beside the same REST request's, on each revision's wire");
  const project = await newProject("mcp");
  const agent = await newAgent("mcp-agent");
  const task = await createTask(agent, { title: "read over MCP", project_id: project });
  const BLOCKS = 5;
  const PER_BLOCK = 100;
  const MODERN = "2026-07-28";
  /** One JSON-RPC request as each revision's clients send it: 2026-07-28 with its envelope in _meta and the headers it requires. */
  const mcpRequest = (revision: string, method: string, params: Record<string, unknown>, name: string, session?: string) => async () => {
    const modern = revision === MODERN;
    const envelope = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    };
    const res = await fetch(`${hub}/mcp`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "X-API-Key": agent.apiKey,
        "MCP-Protocol-Version": revision,
        ...(modern ? { "Mcp-Method": method, "Mcp-Name": name } : {}),
        ...(session ? { "Mcp-Session-Id": session } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: modern ? { ...params, _meta: envelope } : params }),
    });
    const body = (await res.json()) as { result?: { isError?: boolean } };
    if (!res.ok || !body.result || body.result.isError) throw new Error(`${method} ${name}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  };
  const toolCall = (revision: string, name: string, args: Record<string, unknown>) => mcpRequest(revision, "tools/call", { name, arguments: args }, name);
  const rest = (method: string, path: string, body?: unknown) => async () => {
    const res = await fetch(`${hub}${path}`, {
      method,
      headers: { "Content-Type": "application/json", "X-API-Key": agent.apiKey },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status}`);
    await res.arrayBuffer();
  };
  const pairs = ["2025-11-25", MODERN].flatMap((revision) => [
    { what: `${revision}: read a task (get_task)`, mcp: toolCall(revision, "get_task", { id: task }), rest: rest("GET", `/api/v1/server/tasks/${task}`) },
    {
      what: `${revision}: add a note (add_note)`,
      mcp: toolCall(revision, "add_note", { id: task, content: "from MCP" }),
      rest: rest("POST", `/api/v1/server/tasks/${task}/notes`, { content: "from REST" }),
    },
  ]);
  // Today's 2025 clients name their session on every request, which the hub checks is still theirs.
  const opened = await fetch(`${hub}/mcp`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "X-API-Key": agent.apiKey },
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } }),
  });
  const session = opened.headers.get("Mcp-Session-Id") ?? undefined;
  await opened.arrayBuffer();
  pairs.push({
    what: "2025-11-25 in a session: read a task (get_task)",
    mcp: mcpRequest("2025-11-25", "tools/call", { name: "get_task", arguments: { id: task } }, "get_task", session),
    rest: rest("GET", `/api/v1/server/tasks/${task}`),
  });
  pairs.push({
    what: `${MODERN}: follow a task (tasks/get)`,
    mcp: mcpRequest(MODERN, "tasks/get", { taskId: task }, task),
    rest: rest("GET", `/api/v1/server/tasks/${task}`),
  });
  /** CPU ms per call of `call`, made `n` times one after another. */
  const cpuPerCall = async (call: () => Promise<void>, n: number) => {
    const before = cpuMs(hubProcess);
    for (let i = 0; i < n; i++) await call();
    const after = cpuMs(hubProcess);
    return before === null || after === null ? NaN : (after - before) / n;
  };
  for (const pair of pairs) {
    // Warm up both: the first tool list or call builds the tools' schemas from the API's description, once per isolate.
    await cpuPerCall(pair.mcp, 20);
    await cpuPerCall(pair.rest, 20);
    const mcp: number[] = [];
    const viaRest: number[] = [];
    for (let b = 0; b < BLOCKS; b++) {
      mcp.push(await cpuPerCall(pair.mcp, PER_BLOCK));
      viaRest.push(await cpuPerCall(pair.rest, PER_BLOCK));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(mcp) / mean(viaRest);
    report(
      `  ${pair.what}: tool call ${fmt(mean(mcp), 2)} ms CPU, REST ${fmt(mean(viaRest), 2)} ms CPU per request (${BLOCKS * PER_BLOCK} each, in blocks of ${PER_BLOCK} taking turns)` +
        ` → ${fmt(ratio, 2)}× (target ≤ 1.2×)`,
    );
  }
}

// ── (4)–(6) live sockets ────────────────────────────────────────────────
const wsBase = hub.replace("http", "ws");
/** Opens a socket and resolves once it is open; frames go to `onFrame`. */
/**
 * What the figures read of the sockets' frames, on the frames of the types they read (the description gives the
 * sockets' protocols in prose, not schemas).
 */
interface Frame {
  type: string;
  event_type: string;
  created_at: string;
  data: { content: string };
  payload: { taskId: string };
}
function openWs(url: string, protocols: string[], onFrame: (frame: Frame) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    ws.onopen = () => resolve(ws);
    ws.onerror = (e) => reject(new Error(`socket failed: ${(e as ErrorEvent).message ?? e.type}`));
    ws.onmessage = (m) => onFrame(JSON.parse(m.data));
  });
}
/** Latency of one-insert requests, one at a time: the baseline of the latency scenarios. */
async function oneInsertLatencies(n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await oneInsert();
    out.push(performance.now() - t);
  }
  return out;
}
const insertLatency = wanted("sockets") || wanted("workerd") ? await oneInsertLatencies(100) : [];
const insertP50 = percentile(insertLatency, 50);
const insertP99 = percentile(insertLatency, 99);
if (wanted("sockets")) {
  console.log("\n(4) one event fanned out to 1,000 dashboard sockets");
  {
    const project = await newProject("fan-out sockets");
    const agent = await newAgent("socket-agent");
    const task = await createTask(agent, { title: "noisy", project_id: project });
    const pending = new Map<string, number>(); // note content → send time
    const latencies: number[] = [];
    const afterCommit: number[] = [];
    const sockets = await pool(Array.from({ length: 1000 }), 50, () =>
      openWs(`${wsBase}/api/v1/projects/${project}/ws`, ["bearer", admin], (f) => {
        if (f.type !== "event" || f.event_type !== "note_added") return;
        latencies.push(performance.now() - pending.get(f.data.content)!);
        // Same machine, same clock: the event's created_at is its commit time.
        afterCommit.push(Date.now() - Date.parse(f.created_at));
      }),
    );
    const ROUNDS = 10;
    for (let i = 0; i < ROUNDS; i++) {
      const content = `n${i}`;
      pending.set(content, performance.now());
      await addNote(agent, task, content);
      const expected = (i + 1) * sockets.length;
      for (let t = 0; latencies.length < expected && t < 1000; t++) await new Promise((r) => setTimeout(r, 5));
    }
    report(
      `  ${ROUNDS} events × ${sockets.length} sockets: ${latencies.length} deliveries, from the request p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms;` +
        ` from the commit p50 ${fmt(percentile(afterCommit, 50))} ms, p99 ${fmt(percentile(afterCommit, 99))} ms (target p99 ≤ 100 ms)` +
        `   | one-insert request: p50 ${fmt(insertP50)} ms, p99 ${fmt(insertP99)} ms`,
    );
    sockets.forEach((ws) => ws.close());
  }

  console.log("\n(5) completion of an upstream → notify:task-assigned for its auto-assigned downstream");
  {
    const project = await newProject("notify");
    const producer = await newAgent("notify-producer", { languages: ["none"], max_concurrent_tasks: 1000 });
    const consumer = await newAgent("notify-consumer", { languages: ["notify"], max_concurrent_tasks: 1000 });
    const waiting = new Map<string, number>();
    const latencies: number[] = [];
    const ws = await openWs(`${wsBase}/api/v1/projects/${project}/agent-ws`, [], (f) => {
      if (f.type === "auth_ok") return;
      if (f.type === "notify:task-assigned" && waiting.has(f.payload.taskId)) latencies.push(performance.now() - waiting.get(f.payload.taskId)!);
    });
    ws.send(JSON.stringify({ type: "auth", api_key: consumer.apiKey }));
    await new Promise((r) => setTimeout(r, 200));
    const ROUNDS = 100;
    for (let i = 0; i < ROUNDS; i++) {
      const up = await createTask(producer, { title: "up", project_id: project });
      const down = await createTask(producer, { title: "down", project_id: project, dependency_ids: [up], requirements: { languages: ["notify"] } });
      await assignTo(producer, up);
      await start(producer, up);
      waiting.set(down, performance.now());
      await complete(producer, up, "done");
      for (let t = 0; latencies.length <= i && t < 400; t++) await new Promise((r) => setTimeout(r, 2));
    }
    report(
      `  ${latencies.length}/${ROUNDS} notifications: p50 ${fmt(percentile(latencies, 50))} ms, p99 ${fmt(percentile(latencies, 99))} ms from the completion request (target p99 ≤ 25 ms)` +
        `   | one-insert request: p50 ${fmt(insertP50)} ms, p99 ${fmt(insertP99)} ms`,
    );
    ws.close();
  }

  console.log("\n(6) sustained events to 100 dashboard sockets");
  {
    const project = await newProject("sustained");
    const agent = await newAgent("sustained-agent");
    const task = await createTask(agent, { title: "stream", project_id: project });
    let delivered = 0;
    const sockets = await pool(Array.from({ length: 100 }), 25, () =>
      openWs(`${wsBase}/api/v1/projects/${project}/ws`, ["bearer", admin], (f) => {
        if (f.type === "event") delivered++;
      }),
    );
    const SECONDS = 5;
    let sent = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() - started < SECONDS * 1000) {
          await addNote(agent, task, "tick");
          sent++;
        }
      }),
    );
    for (let t = 0; delivered < sent * sockets.length && t < 500; t++) await new Promise((r) => setTimeout(r, 10));
    const seconds = secondsSince(started);
    const inserts = await baselineRate(1000, 8);
    report(
      `  ${fmt(sent / SECONDS, 0)} events/s for ${SECONDS} s, ${fmt(delivered / seconds, 0)} frames/s delivered to ${sockets.length} sockets (${delivered}/${sent * sockets.length} delivered)` +
        `   | one-insert requests at the same concurrency: ${fmt(inserts.perSecond, 0)}/s`,
    );
    sockets.forEach((ws) => ws.close());
  }
}

// ── (7) DataRef bytes ───────────────────────────────────────────────────
if (wanted("dataref")) {
  console.log("\n(7) a 50 MiB DataRef up and down through the hub, beside a plain Worker route doing R2 put/get");
  {
    const { createHash } = await import("node:crypto");
    const size = 50 * 1024 * 1024;
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i += 4096) data[i] = i % 251;
    const sha256 = createHash("sha256").update(data).digest("hex");
    const project = await newProject("bytes");
    const agent = await newAgent("bytes-agent");
    const mibPerSecond = (ms: number) => size / 1024 / 1024 / (ms / 1000);
    const timed = async (fn: () => Promise<void>) => {
      const t = performance.now();
      await fn();
      return performance.now() - t;
    };
    const ROUNDS = 3;
    const hubUp: number[] = [];
    const hubDown: number[] = [];
    const plainUp: number[] = [];
    const plainDown: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const { dataref, upload } = (await ok(agent.hub.POST("/api/v1/server/datarefs", { body: { project_id: project, size, sha256 } }))).data;
      hubUp.push(
        await timed(async () => {
          const res = await fetch(upload.url, { method: "PUT", body: data });
          if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
        }),
      );
      const { download } = (await ok(agent.hub.GET("/api/v1/server/datarefs/{id}", { params: { path: { id: dataref.id } } }))).data;
      if (!download) throw new Error("a complete DataRef without a download URL");
      hubDown.push(
        await timed(async () => {
          const bytes = new Uint8Array(await (await fetch(download.url)).arrayBuffer());
          if (bytes.byteLength !== size) throw new Error("short download");
        }),
      );
      plainUp.push(await timed(async () => void (await fetch(`${baselineUrl}/r2/blob-${i}`, { method: "PUT", body: data })).arrayBuffer()));
      plainDown.push(await timed(async () => void (await (await fetch(`${baselineUrl}/r2/blob-${i}`)).arrayBuffer())));
    }
    const best = (xs: number[]) => Math.min(...xs);
    const up = mibPerSecond(best(hubUp));
    const down = mibPerSecond(best(hubDown));
    const baseUp = mibPerSecond(best(plainUp));
    const baseDown = mibPerSecond(best(plainDown));
    report(
      `  upload ${fmt(up)} MiB/s, download ${fmt(down)} MiB/s (best of ${ROUNDS}, sha256 checked)` +
        `   | plain R2 route: upload ${fmt(baseUp)} MiB/s, download ${fmt(baseDown)} MiB/s → ${fmt((100 * up) / baseUp, 0)} % and ${fmt((100 * down) / baseDown, 0)} % (target ≥ 80 %)`,
    );
  }
}

// ── (3b) tree inside the runtime ────────────────────────────────────────
if (wanted("dashboard")) {
  console.log("\n(8) the dashboard in headless Chromium");
  const { benchDashboard } = await import("../bench/dashboard.ts");
  await benchDashboard({ hub, asAdmin, adminCredentials, newProject, pool, report, fmt });
}

/** The room's p99 to 1,000 dashboards, at most this times a bare Durable Object's sending the same frame right after it. */
const FANOUT_TARGET = 1.2;

if (wanted("workerd")) {
  console.log("\n(3b) inside workerd, without HTTP: the tree through the ProjectRoom, socket fan-out, a DataRef upload, terminals, webhooks");
  {
    // Nothing after this needs the HTTP half: its processes (and any work their rooms still had queued) are stopped,
    // so they take no CPU from the scenarios timed inside workerd.
    await stopWorkers();
    const out = execFileSync(
      `${root}node_modules/.bin/vitest`,
      ["run", "--config", "vitest.bench.config.ts", "--exclude", TRANSFER_BENCH, "--exclude", TUNNEL_BENCH],
      {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, FORCE_COLOR: "0" },
      },
    );
    const benches = [...out.matchAll(/BENCH (\{.*\})/g)].map((m) => JSON.parse(m[1]!));
    const bench = benches.find((b) => b.scenario === "room-tree");
    const fanout = benches.find((b) => b.scenario === "socket-fanout");
    const upload = benches.find((b) => b.scenario === "dataref-upload");
    report(
      `  room: ${bench.tasks} tasks in ${fmt(bench.seconds, 2)} s = ${fmt(bench.tasksPerSecond)} tasks/s` +
        `   | same runtime, one D1 insert per call: ${fmt(bench.baselineInsertsPerSecond, 0)} inserts/s`,
    );
    report(
      `  room, the same tree beside ${fmt(bench.backlog.waiting, 0)} blocked tasks waiting ahead of it in its project: ${fmt(bench.backlog.tasksPerSecond)} tasks/s, ${fmt(bench.backlog.rowsReadPerTask, 1)} D1 rows read per task (starts and completions)` +
        `   | alone in its project: ${fmt(bench.tasksPerSecond)} tasks/s, ${fmt(bench.rowsReadPerTask, 1)} rows read per task`,
    );
    const many = bench.manyProjects;
    report(
      `  one D1 for ${many.projects} projects at once (the tree in each, created together, then driven together by the same agents): ${fmt(many.tasksPerSecond)} tasks/s,` +
        ` ${fmt(many.rowsWrittenPerSecond, 0)} D1 rows written/s driving, ${fmt(many.createdRowsPerSecond, 0)} rows written/s creating (${fmt(many.rowsWrittenPerTask, 1)} rows and ${fmt(many.bytesPerTask / 1024, 1)} KiB of database per task in all)` +
        `   | one project alone: ${fmt(bench.tasksPerSecond)} tasks/s, ${fmt(bench.rowsWrittenPerSecond, 0)} rows written/s driving; one D1 insert per call, 16 at once: ${fmt(bench.baselineInsertsPerSecond, 0)} inserts/s` +
        ` (where one deployment tops out: docs/ARCHITECTURE.md)`,
    );
    // The same tree as one BullMQ Flow on a local redis-server, run right after the room's.
    (await (await import("../bench/bullmq-peer.ts")).bullmqPeerLines(bench, out)).forEach(report);
    if (fanout) {
      report(
        `  sockets in workerd (no dev proxy, no Node client): one event to ${fanout.sockets} dashboards (a Worker of their own, reaching the room through the hub's Worker by its named entrypoint), ${fanout.runs.length} runs of ${fanout.rounds} rounds, each beside the same frame from a bare Durable Object to ${fanout.sockets} sockets of the same Worker, reached through a Worker as the room's are, right after it (target: the room's p99 ≤ ${FANOUT_TARGET}× the bare object's in every run)` +
          `   | what bounds it: the room commits the note (one batch: it holds the task's row) before it sends a frame, which the bare object does not;` +
          ` the same note with no dashboard connected: p50 ${fmt(fanout.noteWithoutSocketsP50)} ms, p99 ${fmt(fanout.noteWithoutSocketsP99)} ms; one-insert request over HTTP: p50 ${fmt(insertP50)} ms;` +
          ` each run also times a second room whose ${fanout.sockets} sockets came through the test runner's default entrypoint (the same fetch of the hub's, the tests' \`exports.default\`, which delivers each frame later than the named entrypoint or a plain forwarding Worker), and a bare object whose sockets were opened on it directly, with no Worker in between (which only a Worker bound to it can do, and no browser)`,
      );
      for (const [i, run] of (fanout.runs as FanoutRun[]).entries()) {
        const ratio = run.p99 / run.bareObjectP99;
        report(
          `    run ${i + 1}: room p50 ${fmt(run.p50)} ms, p99 ${fmt(run.p99)} ms from the room call   | bare object p50 ${fmt(run.bareObjectP50)} ms, p99 ${fmt(run.bareObjectP99)} ms → p99 ${fmt(ratio, 2)}× (${ratio <= FANOUT_TARGET ? "met" : "not met"}); p50 ${fmt(run.p50 - run.bareObjectP50)} ms apart;` +
            ` each call answered, its frames sent, in p50 ${fmt(run.callP50)} ms (room) and ${fmt(run.bareCallP50)} ms (bare object);` +
            ` the second room through the runner's default entrypoint: p50 ${fmt(run.runnerDefaultP50)} ms, p99 ${fmt(run.runnerDefaultP99)} ms (${fmt(run.runnerDefaultP99 / run.bareObjectP99, 2)}× the bare object's p99);` +
            ` the bare object with no Worker in between: p50 ${fmt(run.directP50)} ms, p99 ${fmt(run.directP99)} ms (the room's p99 ${fmt(run.p99 / run.directP99, 2)}× that)`,
        );
      }
      report(
        `  completion → notify:task-assigned in workerd, ${fanout.notifyRounds} rounds: p50 ${fmt(fanout.notifyP50)} ms, p99 ${fmt(fanout.notifyP99)} ms from the room call (target p99 ≤ 25 ms)` +
          `   | one-insert request over HTTP: p50 ${fmt(insertP50)} ms`,
      );
    }
    if (upload) {
      report(
        `  50 MiB DataRef upload in workerd: through the hub ${fmt(upload.hubMiBps)} MiB/s with the sha256 declared, ${fmt(upload.computedMiBps)} MiB/s computing it` +
          `   | plain R2 put of the same body: ${fmt(upload.plainMiBps)} MiB/s → ${fmt((100 * upload.hubMiBps) / upload.plainMiBps, 0)} % and ${fmt((100 * upload.computedMiBps) / upload.plainMiBps, 0)} % (target ≥ 80 %)`,
      );
    }
    const terminal = benches.find((b) => b.scenario === "terminal");
    if (terminal) {
      report(
        `  terminal keystroke in workerd (viewer → link → daemon → echo → viewer), ${terminal.keystrokes} keys: p50 ${fmt(terminal.keyP50)} ms, p99 ${fmt(terminal.keyP99)} ms (target p99 ≤ 15 ms; workerd's clock moves in 1 ms steps)` +
          `   | a ping's round trip on the daemon's socket: p50 ${fmt(terminal.pingP50)} ms, p99 ${fmt(terminal.pingP99)} ms`,
      );
      report(
        `  terminal output in workerd, ${terminal.outputMiB} MiB to ${terminal.many.viewers} viewers, every byte checked in order: ${fmt(terminal.many.totalMiBps)} MiB/s in total (target ≥ 5 MiB/s)` +
          `   | the same output to one viewer: ${fmt(terminal.one.totalMiBps)} MiB/s`,
      );
    }
    const hooks = benches.find((b) => b.scenario === "webhooks");
    if (hooks) {
      report(
        `  webhook in workerd, event commit → received by a local receiver, ${hooks.rounds} events one at a time: p50 ${fmt(hooks.p50)} ms, p99 ${fmt(hooks.p99)} ms (target p99 ≤ 50 ms; the room call itself p50 ${fmt(hooks.commitP50)} ms, p99 ${fmt(hooks.commitP99)} ms)` +
          `   | a signed POST from workerd to the same receiver: p50 ${fmt(hooks.postP50)} ms, p99 ${fmt(hooks.postP99)} ms`,
      );
      const failed = Object.entries(hooks.failedAttempts)
        .map(([error, n]) => `${n}× ${error}`)
        .join(", ");
      report(
        `  webhooks in workerd, ${hooks.events} events (${hooks.batch} committed at once) to ${hooks.endpoints} endpoints: ` +
          `${hooks.allDelivered ? "all delivered, in seq order, verified" : `NOT all delivered: ${JSON.stringify(hooks.shortfalls)}`}${hooks.duplicates ? ` (${hooks.duplicates} sent again)` : ""}, in ${fmt(hooks.seconds, 1)} s = ${fmt(hooks.deliveriesPerSecond, 0)} deliveries/s` +
          ` (commits took ${fmt(hooks.committedSeconds, 1)} s, the first delivery came ${fmt(hooks.firstDeliverySeconds, 1)} s in, then ${fmt(hooks.sendingPerSecond, 0)}/s; failed attempts: ${failed || "none"})` +
          `   | at the same concurrency, signed POSTs: ${fmt(hooks.baselinePostsPerSecond, 0)}/s; each followed by a D1 write, as an attempt is recorded: ${fmt(hooks.baselineRecordedPostsPerSecond, 0)}/s`,
      );
    }
    const ops = out.match(/OPS (\{.*\})/);
    if (ops) console.log(`  room, per operation (operations committed together share their cost): ${ops[1]}`);
  }
}

if (wanted("transfer")) {
  console.log("\n(9) agent-to-agent file transfer inside workerd, through two servers' links");
  // Nothing else runs meanwhile: the memory measured is the transfer's.
  await stopWorkers();
  const { out, samples } = await sampledVitest(TRANSFER_BENCH);
  const bench = [...out.matchAll(/BENCH (\{.*\})/g)].map((m) => JSON.parse(m[1]!)).find((b) => b.scenario === "transfer");
  if (!bench) throw new Error(`the transfer bench printed no figures:\n${out.slice(-2000)}`);
  const mib = (bytes: number) => bytes / (1024 * 1024);
  const before = samples.filter((s) => s.at < bench.runs[0].startEpochMs).at(-1)?.rss ?? NaN;
  const peakDuring = (run: { startEpochMs: number; endEpochMs: number }) =>
    Math.max(...samples.filter((s) => s.at >= run.startEpochMs && s.at <= run.endEpochMs).map((s) => s.rss));
  const large = bench.runs.at(-1);
  report(
    `  ${large.mib} MiB from one fake daemon to another, every chunk checked in order, sha256 verified: ${fmt(large.MiBps)} MiB/s (target ≥ 20 MiB/s)` +
      `   | ${bench.runs
        .slice(0, -1)
        .map((r: { mib: number; MiBps: number }) => `${r.mib} MiB: ${fmt(r.MiBps)} MiB/s`)
        .join(", ")}`,
  );
  // The workerd process holds both links, the Worker and the two fake daemons: its resident memory is sampled every
  // RSS_SAMPLE_MS from /proc. A link that kept chunks would grow with the size of the file; each link's own count of
  // chunk bytes handed on and not yet taken by the other link says how much of the process's memory could be the relay's.
  report(
    `  memory: workerd RSS ${fmt(mib(before), 0)} MiB before; at most ${bench.runs
      .map((r: { mib: number; startEpochMs: number; endEpochMs: number }) => `${fmt(mib(peakDuring(r)), 0)} MiB during ${r.mib} MiB`)
      .join(", ")}` +
      `; chunk bytes on their way between the links at most: sender's link ${fmt(large.senderLinkPeakInFlightBytes / 1024, 0)} KiB, receiver's link ${fmt(large.receiverLinkPeakInFlightBytes / 1024, 0)} KiB` +
      ` (the sending daemon ${bench.leadChunks} chunks ahead of the receiving one at most)`,
  );
}

if (wanted("tunnel")) {
  console.log("\n(10) SSH tunnels inside workerd, between two fake daemons through both servers' links");
  await stopWorkers();
  const { out } = await sampledVitest(TUNNEL_BENCH);
  const bench = [...out.matchAll(/BENCH (\{.*\})/g)].map((m) => JSON.parse(m[1]!)).find((b) => b.scenario === "tunnel");
  if (!bench) throw new Error(`the tunnel bench printed no figures:\n${out.slice(-2000)}`);
  report(
    `  tunnel round trip in workerd (source → its link → target's link → target echoes → back), ${bench.roundTrips} rounds: p50 ${fmt(bench.rttP50)} ms, p99 ${fmt(bench.rttP99)} ms (target p99 ≤ 10 ms; workerd's clock moves in 1 ms steps)` +
      `   | a ping on the source's socket: p50 ${fmt(bench.pingP50)} ms, p99 ${fmt(bench.pingP99)} ms`,
  );
  report(
    `  tunnel throughput in workerd, ${bench.mib} MiB each way, every byte checked in order: source → target ${fmt(bench.upMiBps)} MiB/s, target → source ${fmt(bench.downMiBps)} MiB/s (target ≥ 20 MiB/s)` +
      `   | frame text on its way between the links at most: ${fmt(Math.max(bench.sourcePeakQueuedBytes, bench.targetPeakQueuedBytes) / 1024, 0)} KiB (the sending daemon ${fmt(bench.leadBytes / 1024, 0)} KiB ahead at most)`,
  );
}

console.log("\nSummary\n" + results.map((r) => `  ${r.trim()}`).join("\n"));
await stopWorkers();
process.exit(0);
