/**
 * The room tree's peer: the tree of bench/room-tree.bench-test.ts (1,000 leaves → 100 → 10 → 1 = 1,111 jobs) as one
 * BullMQ Flow (each parent completes after its 10 children) on Debian's redis-server, started here on a free local
 * port with persistence off, and driven to done by no-op workers. The clock matches the room's: creating the tree is
 * setup and stays outside it (the room times from its first assignment sweep to the root's completion; here from the
 * workers' start to the root's completion), so both figures are jobs finished per second of driving the tree.
 *
 * `scripts/bench.ts` prints it beside the room's tasks/s; `node bench/bullmq-peer.ts` runs the peer alone.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConnectionOptions, FlowJob, JobNode } from "bullmq";
import type { Redis as RedisClient } from "ioredis";

const LEVELS = [1000, 100, 10, 1];
const JOBS = LEVELS.reduce((a, b) => a + b, 0);
const ROUNDS = 5;

/**
 * How the workers are set up. BullMQ's guide raises throughput with a worker's `concurrency` (jobs in flight per
 * worker) and with more workers; `removeOnComplete: { count: 0 }` is its production advice (finished jobs do not pile
 * up in Redis). The first setting is the room's own shape (8 agents × 25 tasks each).
 */
interface PeerSetting {
  workers: number;
  concurrency: number;
  removeOnComplete: boolean;
}
const SETTINGS: PeerSetting[] = [
  { workers: 8, concurrency: 25, removeOnComplete: false },
  { workers: 1, concurrency: 200, removeOnComplete: false },
  { workers: 2, concurrency: 100, removeOnComplete: true },
  { workers: 1, concurrency: 1000, removeOnComplete: true },
];
const describe = (s: PeerSetting) =>
  `${s.workers} worker${s.workers > 1 ? "s" : ""} × concurrency ${s.concurrency}${s.removeOnComplete ? ", removeOnComplete" : ""}`;

export interface PeerRound {
  setting: string;
  seconds: number;
  jobsPerSecond: number;
  setupSeconds: number;
  /** CPU per job: the redis-server process, and this Node process (BullMQ's workers and the ioredis client). */
  redisCpuMsPerJob: number;
  nodeCpuMsPerJob: number;
  /** Commands redis ran per job, those inside BullMQ's Lua scripts included; the scripts per job, and their time inside redis. */
  commandsPerJob: number;
  scriptsPerJob: number;
  scriptMsPerJob: number;
}

export type PeerResult =
  { ok: true; redisVersion: string; chosen: string; sweep: PeerRound[]; rounds: PeerRound[]; median: PeerRound } | { ok: false; reason: string };

const median = <T>(xs: T[], by: (x: T) => number) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;

function redisVersion(): string | null {
  try {
    return execFileSync("redis-server", ["--version"], { encoding: "utf8" }).match(/v=([\d.]+)/)?.[1] ?? "unknown";
  } catch {
    return null;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

let clockTicks = 0;
/** CPU time (ms) a process has used so far, from /proc (Linux); NaN elsewhere. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    clockTicks ||= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return NaN;
  }
}

interface RunningRedis {
  child: ChildProcess;
  port: number;
  dir: string;
}

/** A throwaway redis-server: no RDB snapshots, no AOF, its own temporary directory; resolves once it accepts connections. */
async function startRedis(): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), "bench-redis-"));
  const port = await freePort();
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--maxmemory-policy", "noeviction", "--logfile", ""],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await new Promise<void>((resolve, reject) => {
    let log = "";
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes("Ready to accept connections")) resolve();
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`redis-server exited with ${code}: ${log.slice(-500)}`)));
    setTimeout(() => reject(new Error(`redis-server did not start within 10 s: ${log.slice(-500)}`)), 10_000);
  });
  return { child, port, dir };
}

async function stopRedis(redis: RunningRedis) {
  if (redis.child.exitCode === null) {
    const exited = new Promise((resolve) => redis.child.once("exit", resolve));
    redis.child.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (redis.child.exitCode === null) redis.child.kill("SIGKILL");
  }
  rmSync(redis.dir, { recursive: true, force: true });
}

/** The tree as one flow: the root's children are the 10 nodes above 10 nodes above 10 leaves each. */
function flowOf(queueName: string): FlowJob {
  const node = (depth: number): FlowJob =>
    depth === LEVELS.length - 1
      ? { name: "leaf", queueName, data: {} }
      : { name: "node", queueName, data: {}, children: Array.from({ length: 10 }, () => node(depth + 1)) };
  return node(0);
}

/** Redis's command statistics since the last CONFIG RESETSTAT: every command, those run inside Lua scripts included. */
async function commandStats(client: RedisClient) {
  let commands = 0;
  let scripts = 0;
  let scriptMicros = 0;
  for (const [, name, calls, usec] of (await client.info("commandstats")).matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g)) {
    if (name === "info") continue; // this call itself
    commands += Number(calls);
    if (name!.startsWith("eval") || name!.startsWith("fcall")) {
      scripts += Number(calls);
      scriptMicros += Number(usec);
    }
  }
  return { commands, scripts, scriptMicros };
}

/** One tree driven to done with one setting; throws if a parent ran before any of its children had finished, or a job is missing. */
async function round(bullmq: typeof import("bullmq"), admin: RedisClient, redis: RunningRedis, setting: PeerSetting, n: number): Promise<PeerRound> {
  const connection: ConnectionOptions = { host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null };
  const queueName = `tree-${n}`;
  const finished = new Set<string>();
  const childrenOf = new Map<string, string[]>();
  const outOfOrder: string[] = [];
  let rootId = "";
  let settle!: { resolve: () => void; reject: (e: Error) => void };
  const rootDone = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  const stuck = setTimeout(() => settle.reject(new Error("the root did not complete within 60 s")), 60_000);
  const workers = Array.from(
    { length: setting.workers },
    () =>
      new bullmq.Worker(
        queueName,
        // No-op work; the check is in memory, so it costs no Redis round trip.
        async (job) => {
          if (childrenOf.get(job.id!)?.some((child) => !finished.has(child))) outOfOrder.push(job.id!);
          finished.add(job.id!);
        },
        { connection, concurrency: setting.concurrency, autorun: false, ...(setting.removeOnComplete ? { removeOnComplete: { count: 0 } } : {}) },
      ),
  );
  for (const w of workers) {
    w.on("completed", (job) => job.id === rootId && settle.resolve());
    w.on("failed", (job, error) => settle.reject(new Error(`job ${job?.id} failed: ${error.message}`)));
  }
  const producer = new bullmq.FlowProducer({ connection });
  try {
    await Promise.all([...workers.map((w) => w.waitUntilReady()), producer.waitUntilReady()]);
    const setupStarted = performance.now();
    const tree = await producer.add(flowOf(queueName));
    const setupSeconds = (performance.now() - setupStarted) / 1000;
    const walk = (node: JobNode) => {
      childrenOf.set(
        node.job.id!,
        (node.children ?? []).map((c) => c.job.id!),
      );
      node.children?.forEach(walk);
    };
    walk(tree);
    rootId = tree.job.id!;

    await admin.config("RESETSTAT");
    const redisCpuBefore = processCpuMs(redis.child.pid!);
    const nodeCpuBefore = process.cpuUsage();
    const started = performance.now();
    for (const w of workers) w.run().catch((error: Error) => settle.reject(error));
    await rootDone;
    const seconds = (performance.now() - started) / 1000;
    const nodeCpu = process.cpuUsage(nodeCpuBefore);
    const redisCpuMs = processCpuMs(redis.child.pid!) - redisCpuBefore;
    const stats = await commandStats(admin);

    if (finished.size !== JOBS) throw new Error(`${finished.size} of ${JOBS} jobs ran`);
    if (outOfOrder.length) throw new Error(`${outOfOrder.length} parents ran before their children finished`);
    return {
      setting: describe(setting),
      seconds,
      jobsPerSecond: JOBS / seconds,
      setupSeconds,
      redisCpuMsPerJob: redisCpuMs / JOBS,
      nodeCpuMsPerJob: (nodeCpu.user + nodeCpu.system) / 1000 / JOBS,
      commandsPerJob: stats.commands / JOBS,
      scriptsPerJob: stats.scripts / JOBS,
      scriptMsPerJob: stats.scriptMicros / 1000 / JOBS,
    };
  } finally {
    clearTimeout(stuck);
    await Promise.all([...workers.map((w) => w.close()), producer.close()]);
    await admin.flushall();
  }
}

/**
 * Starts redis-server, runs the tree once to warm up (Node's JIT, redis's script cache; not reported), once with each
 * setting, then `ROUNDS` more times with the fastest of them, and stops redis-server (also when a round fails).
 * Without redis-server or BullMQ it says what to install instead.
 */
export async function runBullmqPeer(): Promise<PeerResult> {
  const version = redisVersion();
  if (!version) return { ok: false, reason: "redis-server not found: install it with `apt-get install -y redis-server`" };
  let bullmq: typeof import("bullmq");
  let IORedis: typeof import("ioredis").Redis;
  try {
    bullmq = await import("bullmq");
    IORedis = (await import("ioredis")).Redis;
  } catch {
    return { ok: false, reason: "bullmq or ioredis missing: run `npm install`" };
  }
  const redis = await startRedis();
  const stopOnExit = () => redis.child.kill("SIGKILL");
  process.once("exit", stopOnExit);
  const admin = new IORedis({ host: "127.0.0.1", port: redis.port, maxRetriesPerRequest: null });
  try {
    let n = 0;
    await round(bullmq, admin, redis, SETTINGS[0]!, n++);
    const sweep: PeerRound[] = [];
    for (const setting of SETTINGS) sweep.push(await round(bullmq, admin, redis, setting, n++));
    const best = SETTINGS[sweep.indexOf(sweep.reduce((a, b) => (b.jobsPerSecond > a.jobsPerSecond ? b : a)))]!;
    const rounds: PeerRound[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(bullmq, admin, redis, best, n++));
    return { ok: true, redisVersion: version, chosen: describe(best), sweep, rounds, median: median(rounds, (r) => r.jobsPerSecond) };
  } finally {
    admin.disconnect();
    await stopRedis(redis);
    process.off("exit", stopOnExit);
  }
}

/** Tasks a second the tree through the room should reach in workerd. */
const ROOM_TREE_TARGET = 2500;

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");

type RoomOps = Record<string, { n: number; msPerOp: number; batchMsPerOp: number; queriesPerOp: number; committedWith: number } | undefined>;

/**
 * The bench's lines: the room's tree beside its peer and the ratio, then what bounds each side. The room's writer
 * runs one operation (or group) at a time, so its time per task (a start and a completion, each charged its share
 * of the group it was committed with) is a ceiling on tasks/s (from the room bench's OPS line); BullMQ's side is
 * redis's CPU and its scripts' time per job.
 */
export async function bullmqPeerLines(room: { tasksPerSecond: number }, roomBenchOutput: string): Promise<string[]> {
  const met = room.tasksPerSecond >= ROOM_TREE_TARGET ? "met" : "not met";
  const roomLine = `room tree in workerd: ${fmt(room.tasksPerSecond)} tasks/s (target ≥ ${ROOM_TREE_TARGET.toLocaleString("en")}: ${met})`;
  const peer = await runBullmqPeer().catch((error: Error): PeerResult => ({ ok: false, reason: `FAILED: ${error.message}` }));
  if (!peer.ok) return [`  ${roomLine} | BullMQ peer skipped: ${peer.reason}`];
  const m = peer.median;
  const lines = [
    `  ${roomLine} | BullMQ Flows on redis-server ${peer.redisVersion}: ${fmt(m.jobsPerSecond)} jobs/s → ratio ${fmt(room.tasksPerSecond / m.jobsPerSecond, 2)} (goal ≥ 1.0)`,
    `    BullMQ: median of ${peer.rounds.length} rounds with ${peer.chosen} (rounds ${peer.rounds.map((r) => fmt(r.jobsPerSecond, 0)).join(", ")} jobs/s;` +
      ` each setting once: ${peer.sweep.map((r) => `${r.setting} ${fmt(r.jobsPerSecond, 0)}`).join("; ")}; the flow's creation, setup outside the clock as in the room: ${fmt(m.setupSeconds * 1000, 0)} ms)`,
  ];
  const ops = JSON.parse(roomBenchOutput.match(/OPS (\{.*\})/)?.[1] ?? "{}") as RoomOps;
  const { start, complete } = ops;
  const bullmqWallMs = 1000 / m.jobsPerSecond;
  const peerBound =
    `BullMQ per job: ${fmt(bullmqWallMs, 3)} ms of wall time; redis-server ${fmt(m.redisCpuMsPerJob, 3)} ms CPU; ${fmt(m.scriptsPerJob, 1)} Lua scripts running` +
    ` ${fmt(m.commandsPerJob, 1)} commands, ${fmt(m.scriptMsPerJob, 3)} ms by redis's clock (wall time: it counts time the machine took away); the Node workers ${fmt(m.nodeCpuMsPerJob, 3)} ms CPU`;
  if (start && complete) {
    const writerMs = start.msPerOp + complete.msPerOp;
    const batchMs = start.batchMsPerOp + complete.batchMsPerOp;
    lines.push(
      `    bounds: room writer per task ${fmt(writerMs, 2)} ms (start ${fmt(start.msPerOp, 2)} + complete ${fmt(complete.msPerOp, 2)} ms, one batch at a time, ~${fmt(start.committedWith, 0)} per batch,` +
        ` ${fmt(start.queriesPerOp + complete.queriesPerOp, 2)} D1 round trips) → ceiling ${fmt(1000 / writerMs, 0)} tasks/s, measured ${fmt(room.tasksPerSecond, 0)};` +
        ` of it, D1 running the batches (their writes and events, and the tasks they read back): ${fmt(batchMs, 2)} ms a task → ${fmt(1000 / batchMs, 0)} tasks/s` +
        ` with no other read and no planning at all (local D1 shares the process's CPU with the room and the agents) | ${peerBound}` +
        ` (the room's time per task is ${fmt(writerMs / bullmqWallMs, 0)}× it)`,
    );
  } else lines.push(`    bounds: ${peerBound}`);
  return lines;
}

if (import.meta.main) {
  const result = await runBullmqPeer();
  console.log(JSON.stringify(result, null, 2));
}
