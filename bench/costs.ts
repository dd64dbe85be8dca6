/**
 * The bench's cost model: what one task costs on Cloudflare's bill, driven
 * over HTTP as agents drive it, and priced at Cloudflare's published rates.
 *
 * 1,000 tasks in a tree (900 leaves → 90 → 9 → 1, each node depending on its
 * ten children, so every completion but the root's resolves a dependency and
 * every tenth unblocks its parent) are created, assigned, started and
 * completed by one agent over HTTP. Every answer's Server-Timing says what
 * the request cost: the Worker's D1 queries, rows read and written, and calls
 * to Durable Objects, and the same for the room. Operations the room commits
 * together report their shared cost, so each carries its share (the figures
 * divided by how many shared them). CPU is the hub's processes' own time
 * under `wrangler dev` over the drive (Linux /proc).
 *
 * Not counted: the agent's polls for work (priced apart, per poll), sockets
 * (none are open; Cloudflare bills incoming WebSocket messages 20:1 as
 * requests), work done after an answer (pushes to a daemon's link still under
 * way, the room's alarm), storage, and the plan's monthly allowances: these are
 * marginal prices.
 */
import { writeFileSync } from "node:fs";

/**
 * Cloudflare's published rates, Workers Paid plan, beyond the included usage. Read on 2026-11-23 from:
 * - Workers Standard (requests, CPU): https://developers.cloudflare.com/dynamic-workers/pricing and
 *   https://developers.cloudflare.com/workflows/reference/pricing/, both quoting the Workers Standard rates of
 *   https://developers.cloudflare.com/workers/platform/pricing/
 * - Durable Objects: https://developers.cloudflare.com/durable-objects/platform/pricing
 *   (each RPC method call or fetch on a stub is one request; 20 incoming WebSocket messages count as one)
 * - D1: https://developers.cloudflare.com/d1/platform/pricing/
 */
export const PRICES = {
  readOn: "2026-11-23",
  workerRequestPerMillion: 0.3,
  workerCpuMsPerMillion: 0.02,
  doRequestPerMillion: 0.15,
  doGbSecondPerMillion: 12.5,
  d1RowReadPerMillion: 0.001,
  d1RowWrittenPerMillion: 1.0,
} as const;

/** What a task should cost (issue 37): Trigger.dev charges $25 per million runs, Temporal Cloud $25–50 per million actions. */
export const TARGETS = { rowsWritten: 9, rowsRead: 100, dollars: 10 } as const;
/** The event log's reshaping (issue 53) asks for these, beside the floor. */
const LOG_TARGETS = { rowsWritten: 10, dollars: 12 } as const;

/**
 * The least a task of the drive writes (its design floor), row by row: D1 bills every row and index entry a statement
 * or its triggers write. Each request is its own change, committed in its own batch, and the 4 batches each append to
 * the log; creation writes the task's key and its project's index, and each dependency its row and its upstream's index
 * (one dependency a task in the drive's tree); assigning and finishing write the task's entry in its server's index.
 */
const LOG_ROWS = 4;
export const FLOOR: readonly (readonly [what: string, rows: number])[] = [
  ["the task's row, at each of its 4 requests", 4],
  ["a log row at each of them", LOG_ROWS],
  ["its key and its project's index, at creation", 2],
  ["its dependency's row and its upstream's index", 2],
  ["its server's index, as it is assigned and as it ends", 2],
];
export const floorRows = FLOOR.reduce((n, [, rows]) => n + rows, 0);
/** What no shape of the log removes: the floor's rows that are the task's own and its indexes'. */
const rowsButTheLog = floorRows - LOG_ROWS;
/** The task's key is an index of its own (a text primary key keeps a rowid beside it); a table without rowid keeps it in the row. */
const KEY_ROWS = 1;

/** A Durable Object is billed for 128 MB while active. */
const DO_GB = 128 / 1024;

/** What one request cost, from its Server-Timing; the room's part is this request's share of its group. */
export interface Billed {
  workerD1: number;
  workerRowsRead: number;
  workerRowsWritten: number;
  workerDo: number;
  roomD1: number;
  roomRowsRead: number;
  roomRowsWritten: number;
  roomDo: number;
  roomMs: number;
  /** This request's share of the room's batches: 1 over how many operations its batch committed together. */
  roomBatches: number;
  /** D1 calls whose rows D1 did not report (a query's first raw() in an isolate): the rows above leave them out. */
  uncounted: number;
}

const none = (): Billed => ({
  workerD1: 0,
  workerRowsRead: 0,
  workerRowsWritten: 0,
  workerDo: 0,
  roomD1: 0,
  roomRowsRead: 0,
  roomRowsWritten: 0,
  roomDo: 0,
  roomMs: 0,
  roomBatches: 0,
  uncounted: 0,
});

/** Reads a request's cost from its Server-Timing. A figure the hub did not report is NaN, so a sum shows it missing. */
export function billedBy(timing: string | null): Billed {
  const n = (re: RegExp, i = 1) => {
    const m = timing?.match(re);
    return m ? Number(m[i]) : NaN;
  };
  const room = /room;dur=([\d.]+);desc="d1 queries=(\d+), operations=(\d+)/.test(timing ?? "");
  const shared = room ? n(/room;dur=[\d.]+;desc="d1 queries=\d+, operations=(\d+)/) : 1;
  const roomPart = (re: RegExp, i = 1) => (room ? n(re, i) / shared : 0);
  return {
    workerD1: n(/worker;desc="d1 queries=(\d+)/),
    workerRowsRead: n(/worker-d1;desc="rows read=(\d+)/),
    workerRowsWritten: n(/worker-d1;desc="rows read=\d+, rows written=(\d+)/),
    workerDo: n(/worker-do;desc="requests=(\d+)/),
    roomD1: roomPart(/room;dur=[\d.]+;desc="d1 queries=(\d+)/),
    roomRowsRead: roomPart(/room-d1;desc="rows read=(\d+)/),
    roomRowsWritten: roomPart(/room-d1;desc="rows read=\d+, rows written=(\d+)/),
    roomDo: roomPart(/room-do;desc="requests=(\d+)/),
    roomMs: roomPart(/room;dur=([\d.]+)/),
    roomBatches: room ? 1 / shared : 0,
    uncounted: n(/worker-d1;desc="[^"]*calls uncounted=(\d+)/) + roomPart(/room-d1;desc="[^"]*calls uncounted=(\d+)/),
  };
}

const add = (a: Billed, b: Billed): Billed =>
  Object.fromEntries(Object.keys(a).map((k) => [k, a[k as keyof Billed] + b[k as keyof Billed]])) as unknown as Billed;

/** One task's cost, in the units Cloudflare bills. */
export interface PerTask {
  workerRequests: number;
  doRequests: number;
  d1Queries: number;
  rowsRead: number;
  rowsWritten: number;
  /** The hub's processes under wrangler dev, per task: an upper bound of the Worker's billed CPU (see costLines). */
  cpuMs: number | null;
  /** The room's busy time per task, in GB-s at 128 MB. */
  doGbSeconds: number;
}

/** The four requests that drive a task, each summed over the drive. */
export const STEPS = ["create", "assign", "start", "complete"] as const;
export type Step = (typeof STEPS)[number];

export interface StepFigures {
  rowsRead: number;
  rowsWritten: number;
  operationsPerBatch?: number;
}

export interface CostFigures {
  tasks: number;
  perTask: PerTask;
  /**
   * Rows read and written per task by each of its requests, and how many operations the room committed in each of its
   * batches on average (absent from figures recorded before they were kept).
   */
  bySteps?: Record<Step, StepFigures>;
  /** What one poll for work (GET /server/tasks/check, with work waiting) costs, priced apart. */
  perPoll: PerTask;
  /** The Worker's and the room's shares, per task, for the record. */
  split: Billed;
}

/** Dollars per million tasks, line by line. */
export function costLines(t: PerTask): [string, number, string][] {
  // Per million tasks at a price per million units: the units per task times the price.
  return [
    ["Worker requests", t.workerRequests * PRICES.workerRequestPerMillion, `${t.workerRequests.toFixed(2)} per task × $${PRICES.workerRequestPerMillion}/M`],
    ["Durable Object requests", t.doRequests * PRICES.doRequestPerMillion, `${t.doRequests.toFixed(2)} per task × $${PRICES.doRequestPerMillion}/M`],
    ["D1 rows read", t.rowsRead * PRICES.d1RowReadPerMillion, `${t.rowsRead.toFixed(1)} per task × $${PRICES.d1RowReadPerMillion}/M`],
    ["D1 rows written", t.rowsWritten * PRICES.d1RowWrittenPerMillion, `${t.rowsWritten.toFixed(1)} per task × $${PRICES.d1RowWrittenPerMillion}/M`],
    [
      "CPU (upper bound)",
      (t.cpuMs ?? NaN) * PRICES.workerCpuMsPerMillion,
      `${t.cpuMs === null ? "n/a" : t.cpuMs.toFixed(2)} ms per task × $${PRICES.workerCpuMsPerMillion}/M ms: all of wrangler dev's processes (Worker, rooms, local D1), priced as Worker CPU`,
    ],
    [
      "Durable Object duration",
      t.doGbSeconds * PRICES.doGbSecondPerMillion,
      `${t.doGbSeconds.toFixed(4)} GB-s per task (the room's busy time × 128 MB) × $${PRICES.doGbSecondPerMillion}/M GB-s`,
    ],
  ];
}

export const dollarsPerMillion = (t: PerTask) => costLines(t).reduce((sum, [, dollars]) => sum + (Number.isFinite(dollars) ? dollars : 0), 0);

interface Drive {
  hub: string;
  /** An admin's access token. */
  admin: string;
  /** CPU ms spent so far by the hub's processes, or null where it cannot be read. */
  cpuMs: () => number | null;
  pool: <T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>) => Promise<R[]>;
}

/** Drives the tree and returns what a task cost. */
export async function measureCosts({ hub, admin, cpuMs, pool }: Drive): Promise<CostFigures> {
  const send = async (path: string, init: { method?: string; body?: unknown; token?: string; apiKey?: string }, expected: number) => {
    const res = await fetch(`${hub}${path}`, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        ...(init.body === undefined ? {} : { "Content-Type": "application/json" }),
        ...(init.token ? { Authorization: `Bearer ${init.token}` } : {}),
        ...(init.apiKey ? { "X-API-Key": init.apiKey } : {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`${path}: ${res.status} ${text}`);
    return { json: JSON.parse(text), timing: res.headers.get("Server-Timing") };
  };
  const project = (await send("/api/v1/projects", { body: { name: `costs ${Date.now()}` }, token: admin }, 201)).json.id as string;
  const { token } = (await send("/api/v1/servers/tokens", { body: {}, token: admin }, 201)).json;
  const name = `costs-agent-${Date.now()}`;
  const agent = (await send("/api/v1/servers/register", { body: { name, hostname: name, registration_token: token } }, 201)).json;
  const apiKey = agent.api_key as string;

  let total = none();
  let requests = 0;
  let steps = Object.fromEntries(STEPS.map((s) => [s, none()])) as Record<Step, Billed>;
  const asAgent = async (path: string, body: unknown, expected = 200) => {
    const { json, timing } = await send(path, { body, apiKey }, expected);
    requests++;
    const billed = billedBy(timing);
    total = add(total, billed);
    const step = STEPS.find((s) => path.endsWith(`/${s}`)) ?? "create";
    steps[step] = add(steps[step], billed);
    return json;
  };

  /** Creates the tree (leaves first: a task names the tasks it depends on), then drives it level by level. */
  const driveTree = async (shape: (readonly [count: number, fanIn: number])[]) => {
    const levels: string[][] = [];
    for (const [count, fanIn] of shape) {
      const below = levels.at(-1) ?? [];
      levels.push(
        await pool(Array.from({ length: count }), 16, async (_, i) => {
          const dependency_ids = fanIn ? below.slice(i * fanIn, i * fanIn + fanIn) : undefined;
          return (await asAgent("/api/v1/server/tasks", { title: "cost", project_id: project, ...(dependency_ids ? { dependency_ids } : {}) }, 201))
            .id as string;
        }),
      );
    }
    // Each level's tasks are unblocked by the completions of the one before.
    for (const level of levels) {
      await pool(level, 16, async (id) => {
        await asAgent(`/api/v1/server/tasks/${id}/assign`, { server_name: name });
        await asAgent(`/api/v1/server/tasks/${id}/start`, {});
        const done = await asAgent(`/api/v1/server/tasks/${id}/complete`, { result: "ok" });
        if (done.status !== "done") throw new Error(`task ${id} is ${done.status} after completing`);
      });
    }
    return levels.flat().length;
  };

  // A small tree first, so the isolates have seen every query of the drive (a query's first raw() goes uncounted).
  await driveTree([
    [20, 0],
    [2, 10],
  ]);
  total = none();
  requests = 0;
  steps = Object.fromEntries(STEPS.map((s) => [s, none()])) as Record<Step, Billed>;
  const cpuBefore = cpuMs();
  const tasks = await driveTree([
    [900, 0],
    [90, 10],
    [9, 10],
    [1, 9],
  ]);
  const cpuAfter = cpuMs();
  const [driveTotal, driveRequests, driveSteps] = [total, requests, steps];

  // One poll with work waiting: the agent's check for tasks assigned to it.
  const waiting = (await asAgent("/api/v1/server/tasks", { title: "waiting", project_id: project }, 201)).id as string;
  await asAgent(`/api/v1/server/tasks/${waiting}/assign`, { server_name: name });
  await send("/api/v1/server/tasks/check", { apiKey }, 200); // its queries seen once, as the drive's were
  const POLLS = 20;
  let polls = none();
  const pollCpuBefore = cpuMs();
  for (let i = 0; i < POLLS; i++) polls = add(polls, billedBy((await send("/api/v1/server/tasks/check", { apiKey }, 200)).timing));
  const pollCpuAfter = cpuMs();

  const perTask = (b: Billed, n: number, workerRequests: number, cpu: number | null): PerTask => ({
    workerRequests: workerRequests / n,
    doRequests: (b.workerDo + b.roomDo) / n,
    d1Queries: (b.workerD1 + b.roomD1) / n,
    rowsRead: (b.workerRowsRead + b.roomRowsRead) / n,
    rowsWritten: (b.workerRowsWritten + b.roomRowsWritten) / n,
    cpuMs: cpu === null ? null : cpu / n,
    doGbSeconds: (b.roomMs / 1000 / n) * DO_GB,
  });
  const cpu = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return {
    tasks,
    perTask: perTask(driveTotal, tasks, driveRequests, cpu(cpuBefore, cpuAfter)),
    bySteps: Object.fromEntries(
      STEPS.map((s) => {
        const b = driveSteps[s];
        const figures: StepFigures = {
          rowsRead: (b.workerRowsRead + b.roomRowsRead) / tasks,
          rowsWritten: (b.workerRowsWritten + b.roomRowsWritten) / tasks,
          operationsPerBatch: tasks / b.roomBatches,
        };
        return [s, figures];
      }),
    ) as Record<Step, StepFigures>,
    perPoll: perTask(polls, POLLS, POLLS, cpu(pollCpuBefore, pollCpuAfter)),
    split: Object.fromEntries(Object.entries(driveTotal).map(([k, v]) => [k, v / tasks])) as unknown as Billed,
  };
}

/** The figures recorded at an earlier commit, printed beside the live ones. */
export interface RecordedCosts {
  commit: string;
  date: string;
  command: string;
  note?: string;
  figures: CostFigures;
}

/** Prints the cost model, with figures recorded at another commit beside it when given. */
export function reportCosts(live: CostFigures, recorded: RecordedCosts | undefined, report: (line: string) => void) {
  const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
  const units = (t: PerTask) =>
    `${fmt(t.workerRequests)} Worker requests, ${fmt(t.doRequests)} DO requests, ${fmt(t.d1Queries)} D1 queries, ${fmt(t.rowsRead, 1)} rows read, ${fmt(t.rowsWritten, 1)} rows written, ${t.cpuMs === null ? "n/a" : fmt(t.cpuMs)} ms CPU`;
  report(
    `  per task (${live.tasks} tasks: create, assign, start, complete): ${units(live.perTask)}; D1 calls whose rows went uncounted: ${fmt(live.split.uncounted * live.tasks, 0)}`,
  );
  if (recorded) report(`    recorded at ${recorded.commit.slice(0, 7)} (${recorded.date}): ${units(recorded.figures.perTask)}`);
  const steps = (s: CostFigures) =>
    s.bySteps
      ? STEPS.map((k) => {
          const { rowsRead, rowsWritten, operationsPerBatch } = s.bySteps![k];
          const grouped = operationsPerBatch === undefined ? "" : ` (${fmt(operationsPerBatch, 1)} a batch)`;
          return `${k} ${fmt(rowsRead, 1)} read / ${fmt(rowsWritten, 1)} written${grouped}`;
        }).join(", ")
      : "not recorded";
  report(`    rows per task by request: ${steps(live)}` + (recorded ? `   | at ${recorded.commit.slice(0, 7)}: ${steps(recorded.figures)}` : ""));
  const { rowsWritten, rowsRead } = live.perTask;
  const dollars = dollarsPerMillion(live.perTask);
  const met = (ok: boolean) => (ok ? "met" : "not met");
  report(
    `    targets: rows written ≤ ${TARGETS.rowsWritten} per task: ${fmt(rowsWritten, 1)} ${met(rowsWritten <= TARGETS.rowsWritten)}; ` +
      `rows read ≤ ${TARGETS.rowsRead}: ${fmt(rowsRead, 1)} ${met(rowsRead <= TARGETS.rowsRead)}; ` +
      `≤ $${TARGETS.dollars} per million tasks: $${fmt(dollars)} ${met(dollars <= TARGETS.dollars)}`,
  );
  report(
    `    the event log's targets: rows written ≤ ${LOG_TARGETS.rowsWritten} per task: ${met(rowsWritten <= LOG_TARGETS.rowsWritten)}; ` +
      `≤ $${LOG_TARGETS.dollars} per million tasks: ${met(dollars <= LOG_TARGETS.dollars)}`,
  );
  // What the same rows would cost at the floor: the other lines as measured.
  const atFloor = dollarsPerMillion({ ...live.perTask, rowsWritten: floorRows });
  report(
    `    rows written per task: ${fmt(rowsWritten, 1)} → $${fmt(dollars)} per million tasks; design floor ${floorRows} rows → $${fmt(atFloor)}` +
      ` (${FLOOR.map(([what, rows]) => `${what} ${rows}`).join("; ")})`,
  );
  report(
    `    what bounds rows written: above the floor, each change of a task's status writes its roll-up row (triggers of migration 0038: one row per project,` +
      ` day and type, whatever figures move; 4 a task), and a completion that unblocks its parent writes the parent and its task_unblocked event.` +
      ` A task's timeline is read from the log by its key, in the blocks of 4,096 seqs that hold its events (a row per task and later block), so an event is one row,` +
      ` one for each of the drive's requests. Fewer than ${floorRows} needs several requests committed together sharing a log row and a roll-up row: the room` +
      ` already commits starts and completions in groups (a batch's operations above), but each operation in a group appends its own event row and moves` +
      ` its roll-up row again;` +
      ` even with every log and roll-up row shared by many tasks, the task's own rows and indexes (${rowsButTheLog} of the floor) remain,` +
      ` or ${rowsButTheLog - KEY_ROWS} with its key kept in its row (a table without rowid: D1 bills an insert with one index 2 rows rather than 3).`,
  );
  // The rows each dollar target leaves once this run's other lines are paid.
  const otherDollars = dollars - rowsWritten * PRICES.d1RowWrittenPerMillion;
  const rowsFor = (target: number) => fmt((target - otherDollars) / PRICES.d1RowWrittenPerMillion, 1);
  report(
    `    what the dollar targets leave for rows written: this run's other lines come to $${fmt(otherDollars)} per million tasks, so` +
      ` ≤ $${LOG_TARGETS.dollars} leaves ${rowsFor(LOG_TARGETS.dollars)} rows a task and ≤ $${TARGETS.dollars} leaves ${rowsFor(TARGETS.dollars)}`,
  );
  if (rowsRead > TARGETS.rowsRead)
    report(
      `    what bounds rows read: each batch's append checks its operations' guards and reads its events from the statement's list (about 2 rows), its outbox` +
        ` statement asks whether anyone is owed a delivery (about 2 rows), each answer reads the task's view back (about 5 rows), and a task given to a server is read` +
        ` back at the end of that batch, the first of its siblings with its dependents' other dependencies and their upstreams (the tree's parents have 10).`,
    );
  const before = recorded ? new Map(costLines(recorded.figures.perTask).map(([label, dollars]) => [label, dollars])) : undefined;
  for (const [label, dollars, how] of costLines(live.perTask)) {
    report(
      `    ${label.padEnd(24)} $${fmt(dollars, 4).padStart(9)} per million tasks (${how})${before ? `   | at ${recorded!.commit.slice(0, 7)}: $${fmt(before.get(label)!, 4)}` : ""}`,
    );
  }
  report(
    `  → $${fmt(dollarsPerMillion(live.perTask))} per million tasks (rates read ${PRICES.readOn}; marginal, beyond the plan's allowances)` +
      (recorded ? `   | recorded at ${recorded.commit.slice(0, 7)}: $${fmt(dollarsPerMillion(recorded.figures.perTask))}` : ""),
  );
  report(`  one poll for work (GET /server/tasks/check), priced apart: ${units(live.perPoll)} → $${fmt(dollarsPerMillion(live.perPoll), 4)} per million polls`);
}

/** Writes the figures as a record for another checkout to print beside its own (BENCH_COSTS_RECORD=path). */
export function recordCosts(path: string, figures: CostFigures, commit: string, command: string, note?: string) {
  const record: RecordedCosts = { commit, date: new Date().toISOString().slice(0, 10), command, ...(note ? { note } : {}), figures };
  writeFileSync(path, JSON.stringify(record, null, 2) + "\n");
}
