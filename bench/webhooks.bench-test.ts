/**
 * Webhooks inside workerd, delivered to the Node receiver beside the tests
 * (test/receiver-setup.ts), which verifies each with the `standardwebhooks`
 * library as a customer's would:
 *  - an event's commit through the project's room → the receiver has it, one
 *    event at a time, beside a plain signed POST from workerd to the same
 *    receiver (what one delivery costs at least);
 *  - 1,000 events, committed 50 at a time, to 10 endpoints, each checked to
 *    have every one, once, in seq order, verified; beside plain POSTs, and
 *    POSTs each followed by a D1 write as a recorded attempt is, at the same
 *    concurrency. Whether all arrived is reported (`allDelivered`), not
 *    asserted.
 * Latencies are timed on workerd's clock: the receiver's long-poll
 * (`/control/{name}/wait`) answers as a delivery arrives. The receiver's own
 * timestamps (same machine, wall clock, whole ms) give a second reading.
 * Prints one `BENCH {...}` line.
 */
import { env } from "cloudflare:workers";
import { expect, inject, it } from "vitest";
import { signedRequest } from "../src/integrations/webhook-message";
import { newTask, type RoomActor, type RoomCommand, type RoomResult } from "../src/room/commands";
import { bootstrapAdmin, call, createProject } from "../test/helpers";
import { percentile } from "./percentile";

const ROUNDS = 200;
const WARMUP = 10;
const ENDPOINTS = 10;
const EVENTS = 1000;
/** Events committed at once in the throughput scenario. */
const BATCH = 50;
/** Requests per stream in the throughput baselines (one stream per endpoint). */
const BASELINE_POSTS = 100;
const receiver = inject("receiver");

interface Received {
  id: string;
  verified: boolean;
  /** When the receiver had it (Node's Date.now()). */
  at: number;
  body: { type: string; data: { seq: number; type: string; data: { content?: string } } };
}

const person: RoomActor = { kind: "person", userId: "bench", label: "bench" };
type Room = ReturnType<typeof roomOf>;
const roomOf = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
async function run(room: Room, command: RoomCommand) {
  const r = (await room.execute(person, command)) as unknown as RoomResult;
  if (!r.ok) throw new Error(`${command.op}: ${r.problem.detail}`);
  return r;
}
const note = (taskId: string, content: string): RoomCommand => ({ op: "note", taskId, content, urgent: false });
async function createTask(room: Room) {
  const created = await run(room, {
    op: "create",
    task: newTask({ title: "hooked", spec: "", type: "feature", priority: "normal" }),
    dependencies: [],
  });
  return created.taskId;
}

async function control(name: string, settings: Record<string, unknown> = {}): Promise<{ received: Received[] }> {
  return (await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify(settings) })).json();
}
/** Resolves once the receiver has `count` deliveries for `name` (or the timeout passed). */
async function waitFor(name: string, count: number, timeoutMs = 30_000): Promise<{ count: number; last: Received | null }> {
  return (await fetch(`${receiver}/control/${name}/wait?count=${count}&timeoutMs=${timeoutMs}`)).json();
}
/** A receiver endpoint of its own that knows `secret`, accepting everything at once. */
const freshReceiver = async (secret: string) => {
  const name = `bench-${crypto.randomUUID().slice(0, 8)}`;
  await control(name, { secrets: [secret], status: 200, delayMs: 0, received: [] });
  return name;
};

/** `n` webhooks of the project (all event types), each to a receiver endpoint of its own that knows its secret. */
async function subscribe(token: string, projectId: string, n: number) {
  const hooks: { name: string; id: string; secret: string }[] = [];
  for (let i = 0; i < n; i++) {
    const name = `bench-${crypto.randomUUID().slice(0, 8)}`;
    const created = await call(`/api/v1/projects/${projectId}/webhooks`, { token, body: { url: `${receiver}/hooks/${name}` } });
    expect(created.status, created.text).toBe(201);
    await control(name, { secrets: [created.json.secret], status: 200, delayMs: 0, received: [] });
    hooks.push({ name, id: created.json.id, secret: created.json.secret });
  }
  return hooks;
}

/** A signed POST shaped like a delivery, from workerd to the receiver. */
async function plainPost(name: string, secret: string, i: number) {
  const data = {
    seq: i,
    project_id: "bench",
    type: "note_added",
    task_id: "bench",
    actor: "bench",
    data: { content: `p${i}` },
    created_at: new Date().toISOString(),
  };
  const req = signedRequest({ id: `msg_plain_${i}`, type: "note_added", timestamp: data.created_at, data }, [secret]);
  const res = await fetch(`${receiver}/hooks/${name}`, { method: "POST", headers: req.headers, body: req.body });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`the receiver answered ${res.status}`);
}

/** `streams` loops of `each` calls at once; calls per second. */
async function rate(streams: number, each: number, fn: (stream: number, i: number) => Promise<unknown>) {
  const begun = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async (_, s) => {
      for (let i = 0; i < each; i++) await fn(s, i);
    }),
  );
  return (streams * each) / ((performance.now() - begun) / 1000);
}

it("delivers committed events to webhooks", async () => {
  const admin = await bootstrapAdmin();

  // ── latency: commit → received, one event at a time ──
  const project = await createProject(admin, "webhook latency");
  const room = roomOf(project.id);
  // The task's own event precedes the webhook: the endpoint gets the notes only.
  const taskId = await createTask(room);
  const [hook] = await subscribe(admin, project.id, 1);
  const latencies: number[] = [];
  const byReceiver: number[] = [];
  const commits: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const content = `n${i}`;
    const arrived = waitFor(hook!.name, i + 1);
    const wall = Date.now();
    const begun = performance.now();
    await run(room, note(taskId, content));
    const committed = performance.now();
    const { last } = await arrived;
    const done = performance.now();
    expect(last?.body.data.data.content).toBe(content);
    if (i < WARMUP) continue;
    latencies.push(done - begun);
    byReceiver.push(last!.at - wall);
    commits.push(committed - begun);
  }
  const got = (await control(hook!.name)).received;
  expect(got).toHaveLength(WARMUP + ROUNDS);
  expect(got.every((m) => m.verified)).toBe(true);

  // Baseline: a signed POST of the same shape straight from workerd to the same receiver.
  const plain = await freshReceiver(hook!.secret);
  const posts: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const begun = performance.now();
    await plainPost(plain, hook!.secret, i);
    if (i >= WARMUP) posts.push(performance.now() - begun);
  }
  expect((await control(plain)).received.every((m) => m.verified)).toBe(true);

  // ── throughput: 1,000 events to 10 endpoints ──
  const busy = await createProject(admin, "webhook throughput");
  const busyRoom = roomOf(busy.id);
  const busyTask = await createTask(busyRoom);
  const hooks = await subscribe(admin, busy.id, ENDPOINTS);
  const wall = Date.now();
  const begun = performance.now();
  for (let b = 0; b < EVENTS; b += BATCH) await Promise.all(Array.from({ length: BATCH }, (_, j) => run(busyRoom, note(busyTask, `e${b + j}`))));
  const committedSeconds = (performance.now() - begun) / 1000;
  await Promise.all(hooks.map((h) => waitFor(h.name, EVENTS, 120_000)));
  let deliveredAt = performance.now();
  /** Per endpoint: distinct deliveries, whether they came in seq order, whether every one verified, whether every event is there. */
  const check = (received: Received[]) => {
    const firsts = [...new Map(received.map((m) => [m.id, m])).values()];
    const seqs = firsts.map((m) => m.body.data.seq);
    const contents = new Set(firsts.map((m) => m.body.data.data.content));
    return {
      distinct: firsts.length,
      inOrder: seqs.every((s, i) => i === 0 || s > seqs[i - 1]!),
      verified: received.every((m) => m.verified),
      complete: Array.from({ length: EVENTS }, (_, i) => contents.has(`e${i}`)).every(Boolean),
      duplicates: received.length - firsts.length,
      firstAt: Math.min(...received.map((m) => m.at)),
      lastAt: Math.max(...received.map((m) => m.at)),
    };
  };
  const read = () => Promise.all(hooks.map(async (h) => check((await control(h.name)).received)));
  let checks = await read();
  // A delivery sent again (after an eviction, say) counts once: give the rest a little longer.
  for (let t = 0; checks.some((c) => c.distinct < EVENTS) && t < 100; t++) {
    await new Promise((r) => setTimeout(r, 100));
    checks = await read();
    deliveredAt = performance.now();
  }
  const seconds = (deliveredAt - begun) / 1000;
  const allDelivered = checks.every((c) => c.distinct === EVENTS && c.inOrder && c.verified && c.complete);
  // Attempts that failed (they hold their endpoint's queue until the retry, 5 s later).
  const failed = await env.DB.prepare(
    "SELECT d.error, COUNT(*) AS n FROM delivery_attempts d JOIN outbox o ON o.id = d.outbox_id WHERE o.project_id = ?1 AND d.error IS NOT NULL GROUP BY d.error",
  )
    .bind(busy.id)
    .all<{ error: string; n: number }>();

  // Baselines at the same concurrency: plain signed POSTs, and POSTs each followed by one D1 write batch, as a recorded attempt is.
  await env.DB.prepare("CREATE TABLE IF NOT EXISTS bench_attempts (id TEXT PRIMARY KEY, stream INTEGER NOT NULL, n INTEGER NOT NULL, at TEXT NOT NULL)").run();
  const names = await Promise.all(Array.from({ length: ENDPOINTS }, () => freshReceiver(hook!.secret)));
  const postsPerSecond = await rate(ENDPOINTS, BASELINE_POSTS, (s, i) => plainPost(names[s]!, hook!.secret, i));
  const recordedPostsPerSecond = await rate(ENDPOINTS, BASELINE_POSTS, async (s, i) => {
    await plainPost(names[s]!, hook!.secret, BASELINE_POSTS + i);
    const id = crypto.randomUUID();
    await env.DB.batch([
      env.DB.prepare("INSERT INTO bench_attempts (id, stream, n, at) VALUES (?1, ?2, ?3, ?4)").bind(id, s, i, new Date().toISOString()),
      env.DB.prepare("UPDATE bench_attempts SET n = n + 1 WHERE id = ?1").bind(id),
    ]);
  });

  const firstAt = Math.min(...checks.map((c) => c.firstAt));
  console.log(
    `BENCH ${JSON.stringify({
      scenario: "webhooks",
      rounds: ROUNDS,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: Math.max(...latencies),
      receiverP50: percentile(byReceiver, 50),
      receiverP99: percentile(byReceiver, 99),
      commitP50: percentile(commits, 50),
      commitP99: percentile(commits, 99),
      postP50: percentile(posts, 50),
      postP99: percentile(posts, 99),
      endpoints: ENDPOINTS,
      events: EVENTS,
      batch: BATCH,
      committedSeconds,
      firstDeliverySeconds: (firstAt - wall) / 1000,
      seconds,
      deliveriesPerSecond: (ENDPOINTS * EVENTS) / seconds,
      // From the first delivery to the last, by the receiver's clock: the endpoints' pace once they send.
      sendingPerSecond: (ENDPOINTS * EVENTS) / ((Math.max(...checks.map((c) => c.lastAt)) - firstAt) / 1000),
      allDelivered,
      // Reported rather than asserted, so that `npm run bench` prints the figures either way.
      shortfalls: checks.flatMap(({ distinct, inOrder, verified, complete }, i) =>
        distinct === EVENTS && inOrder && verified && complete ? [] : [{ endpoint: i, distinct, inOrder, verified, complete }],
      ),
      duplicates: checks.reduce((n, c) => n + c.duplicates, 0),
      failedAttempts: Object.fromEntries(failed.results.map((r) => [r.error, r.n])),
      baselinePostsPerSecond: postsPerSecond,
      baselineRecordedPostsPerSecond: recordedPostsPerSecond,
    })}`,
  );
});
