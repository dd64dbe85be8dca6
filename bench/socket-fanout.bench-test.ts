/**
 * Socket fan-out inside workerd, without wrangler's dev proxy or a Node client
 * in between: one event to 1,000 dashboard sockets, and completion →
 * notify:task-assigned on an agent socket. Prints one `BENCH {...}` line.
 *
 * The dashboards are a Worker of their own (bench/dashboards), as browsers are
 * apart from the room, and reach the room through the hub's Worker, by its
 * named entrypoint (bench/hub-entry.ts). In each of five runs, right after the
 * room's rounds, a bare Durable Object (bench/baseline) sends the same frame to
 * as many sockets of that Worker: for what any event to that many sockets
 * costs in this runtime, once reached through a Worker, as the room's are and
 * as a browser's must be, and once directly, as only a Worker bound to the
 * object can. A second room, whose sockets came through the test runner's
 * default entrypoint (the same fetch of the hub's, which the tests call as
 * `exports.default`), sends the same note to as many: what that way in costs
 * every frame. The same room call once no dashboard is connected is what of
 * each latency is the room's commit.
 */
import { env, exports } from "cloudflare:workers";
import { SignJWT } from "jose";
import { expect, it } from "vitest";
import { hubClient, type HubCredentials } from "../client";
import { newTask, type RoomActor, type RoomResult } from "../src/room/commands";
import type { Broadcaster } from "./baseline/worker";
import type { Dashboards } from "./dashboards/worker";
import type { FanoutRun } from "./fanout-run";
import { percentile } from "./percentile";

const SOCKETS = 1000;
const ROUNDS = 10;
/** Runs of the room's rounds, each beside the bare object's right after it. */
const RUNS = 5;
/** The typed client, calling the Worker in this runtime directly (no conformance checks: their cost is not the hub's). */
const hubAs = (credentials: HubCredentials = {}) =>
  hubClient({ baseUrl: "https://hub.test", fetch: (request) => exports.default.fetch(request), ...credentials });
/** The socket an upgrade answered with; throws unless the hub upgraded. */
const upgraded = ({ response }: { response: Response }) => {
  if (response.status !== 101 || !response.webSocket) throw new Error(`no upgrade: ${response.status}`);
  return response.webSocket;
};
const benchEnv = env as unknown as { BENCH_BROADCASTER: DurableObjectNamespace<Broadcaster>; BENCH_DASHBOARDS: DurableObjectNamespace<Dashboards> };

/** A set of SOCKETS sockets: how long after a publish each received the frame carrying `content`. */
interface Receivers {
  received(content: string): Promise<number[]>;
}

/**
 * `publish` sends ROUNDS note_added frames, one at a time, each carrying its content; every socket of `receivers`
 * must receive each. Answers each delivery's latency from the publish call to the frame (Date.now(): the clock every
 * isolate of this runtime shares, in 1 ms steps), and how long each publish call took to answer (it answers once
 * the sender has sent its frames).
 */
async function rounds(run: number, receivers: Receivers, publish: (content: string) => Promise<unknown>) {
  const latencies: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const content = `r${run}n${i}`;
    const sent = Date.now();
    await publish(content);
    calls.push(Date.now() - sent);
    const arrivals = await receivers.received(content);
    expect(arrivals).toHaveLength(SOCKETS);
    latencies.push(...arrivals.map((at) => at - sent));
  }
  return { latencies, calls };
}

it("fans events out to sockets", async () => {
  const now = new Date().toISOString();
  const projectId = crypto.randomUUID();
  const userId = crypto.randomUUID();
  await env.DB.batch([
    env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'sockets', ?1, ?2, ?2)").bind(projectId, now),
    env.DB.prepare("INSERT INTO users (id, email, role, created_at, updated_at) VALUES (?1, 'bench@example.com', 'admin', ?2, ?2)").bind(userId, now),
  ]);
  const token = await new SignJWT({ role: "admin" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setIssuer(env.JWT_ISSUER)
    .setAudience(env.JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(env.JWT_SECRET));

  const person: RoomActor = { kind: "person", userId, label: "bench" };
  /** A project's room, a task of it, and a note on that task: one event, as a room call. */
  const noteIn = async (id: string) => {
    const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(id));
    const created = (await room.execute(person, {
      op: "create",
      task: newTask({ title: "t", spec: "", type: "feature", priority: "normal" }),
      dependencies: [],
    })) as unknown as RoomResult;
    if (!created.ok) throw new Error("create failed");
    return { room, note: (content: string) => room.execute(person, { op: "note", taskId: created.taskId, content, urgent: false }) };
  };
  const { room, note } = await noteIn(projectId);
  const dashboards = benchEnv.BENCH_DASHBOARDS.getByName("room");
  expect(await dashboards.open({ hub: { projectId, token, through: "entrypoint" } }, SOCKETS)).toBe(SOCKETS);
  const secondProject = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'second', ?1, ?2, ?2)").bind(secondProject, now).run();
  const viaRunner = { ...(await noteIn(secondProject)), receivers: benchEnv.BENCH_DASHBOARDS.getByName("via-runner") };
  expect(await viaRunner.receivers.open({ hub: { projectId: secondProject, token, through: "runner-default" } }, SOCKETS)).toBe(SOCKETS);
  await rounds(-1, viaRunner.receivers, viaRunner.note);
  // A first round sees the room's frame, which the bare Durable Objects then send (its content swapped) to as many sockets.
  await rounds(-1, dashboards, note);
  const event = JSON.parse((await dashboards.sample())!);
  /** A bare object, with SOCKETS sockets of the dashboards' Worker opened on it `through` a Worker or its binding. */
  const bare = async (through: "worker" | "binding") => {
    const receivers = benchEnv.BENCH_DASHBOARDS.getByName(`bare-${through}`);
    expect(await receivers.open({ bare: through, through }, SOCKETS)).toBe(SOCKETS);
    const broadcaster = benchEnv.BENCH_BROADCASTER.getByName(through);
    const publish = async (content: string) => {
      event.data.content = content;
      expect(await broadcaster.publish(JSON.stringify(event))).toBe(SOCKETS);
    };
    return { receivers, publish };
  };
  const viaWorker = await bare("worker");
  const direct = await bare("binding");
  // RUNS runs, each the room's rounds, then each bare object's right after them, all sockets open throughout.
  const runs: FanoutRun[] = [];
  for (let run = 0; run < RUNS; run++) {
    const throughHub = await rounds(run, dashboards, note);
    const bareObject = await rounds(run, viaWorker.receivers, viaWorker.publish);
    const directly = await rounds(run, direct.receivers, direct.publish);
    const throughRunner = await rounds(run, viaRunner.receivers, viaRunner.note);
    runs.push({
      p50: percentile(throughHub.latencies, 50),
      p99: percentile(throughHub.latencies, 99),
      callP50: percentile(throughHub.calls, 50),
      runnerDefaultP50: percentile(throughRunner.latencies, 50),
      runnerDefaultP99: percentile(throughRunner.latencies, 99),
      bareObjectP50: percentile(bareObject.latencies, 50),
      bareObjectP99: percentile(bareObject.latencies, 99),
      bareCallP50: percentile(bareObject.calls, 50),
      directP50: percentile(directly.latencies, 50),
      directP99: percentile(directly.latencies, 99),
    });
  }
  for (const receivers of [dashboards, viaRunner.receivers, viaWorker.receivers, direct.receivers]) await receivers.close();
  await new Promise((r) => setTimeout(r, 200));
  // The same room call with no dashboard connected: the part of each latency above that is the room's commit.
  const bareNote: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await note(`bare${i}`);
    bareNote.push(performance.now() - started);
  }

  // Completion of an upstream → notify:task-assigned for its auto-assigned downstream, on the consumer's agent socket.
  const apiKey = `orc_bench_${crypto.randomUUID()}`;
  const keyHash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(apiKey)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  const producer = { id: crypto.randomUUID(), name: "producer" };
  const consumer = { id: crypto.randomUUID(), name: "consumer" };
  for (const [server, caps, hash] of [
    [producer, { max_concurrent_tasks: 1000 }, null],
    [consumer, { languages: ["notify"], max_concurrent_tasks: 1000 }, keyHash],
  ] as const) {
    await env.DB.prepare(
      "INSERT INTO servers (id, name, hostname, capabilities, api_key_hash, last_heartbeat, created_at, updated_at) VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?5, ?5)",
    )
      .bind(server.id, server.name, JSON.stringify(caps), hash, now)
      .run();
  }
  const waiting = new Map<string, number>();
  const notifyLatencies: number[] = [];
  const agentWs = upgraded(
    await hubAs({ apiKey }).GET("/api/v1/projects/{id}/agent-ws", { params: { path: { id: projectId }, header: { Upgrade: "websocket" } } }),
  );
  agentWs.accept();
  agentWs.addEventListener("message", (e) => {
    const f = JSON.parse(e.data as string);
    if (f.type === "notify:task-assigned" && waiting.has(f.payload.taskId)) notifyLatencies.push(performance.now() - waiting.get(f.payload.taskId)!);
  });
  const asProducer: RoomActor = { kind: "agent", serverId: producer.id, serverName: producer.name, label: "agent:producer" };
  const task = (requirements: Record<string, unknown> | null, dependsOn: string[]) => ({
    op: "create" as const,
    task: newTask({ title: "t", spec: "", type: "feature", priority: "normal", requirements }),
    dependencies: dependsOn.map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" as const, contract_key: null })),
  });
  const run = async (actor: RoomActor, command: Parameters<typeof room.execute>[1]) => {
    const r = (await room.execute(actor, command)) as unknown as RoomResult;
    if (!r.ok) throw new Error(`${command.op}: ${r.problem.detail}`);
    return r;
  };
  const NOTIFY_ROUNDS = 100;
  for (let i = 0; i < NOTIFY_ROUNDS; i++) {
    const up = (await run(person, task(null, []))).taskId;
    const down = (await run(person, task({ languages: ["notify"] }, [up]))).taskId;
    await run(person, {
      op: "assign",
      taskId: up,
      target: { serverId: producer.id, serverName: producer.name, sessionId: null, sessionName: null },
      requirePlan: false,
    });
    await run(asProducer, { op: "start", taskId: up });
    waiting.set(down, performance.now());
    await run(asProducer, { op: "complete", taskId: up, result: { summary: "ok" }, structured: false, warnings: [] });
    for (let t = 0; notifyLatencies.length <= i && t < 1000; t++) await new Promise((r) => setTimeout(r, 1));
  }
  expect(notifyLatencies).toHaveLength(NOTIFY_ROUNDS);
  console.log(
    `BENCH ${JSON.stringify({
      scenario: "socket-fanout",
      sockets: SOCKETS,
      rounds: ROUNDS,
      runs,
      noteWithoutSocketsP50: percentile(bareNote, 50),
      noteWithoutSocketsP99: percentile(bareNote, 99),
      notifyRounds: NOTIFY_ROUNDS,
      notifyP50: percentile(notifyLatencies, 50),
      notifyP99: percentile(notifyLatencies, 99),
    })}`,
  );
});
