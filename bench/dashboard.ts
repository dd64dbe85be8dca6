/**
 * The dashboard under load, in headless Chromium: how long until the board of
 * a project with 1,000 tasks is usable, and whether an open board shows every
 * event of 100 task creations a second for 10 seconds. Each figure is printed
 * beside what it is compared with in the same run.
 */
import { existsSync } from "node:fs";
import type { HubClient, paths } from "../client/index.ts";
import { CHROMIUM_PATH, launchChromium } from "../test-browser/chromium.ts";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A task in the core protocol's body (the operation also takes a task-format request). */
type NewTask = Extract<paths["/api/v1/tasks"]["post"]["requestBody"]["content"]["application/json"], { title: string }>;

/** What scripts/bench.ts lends the scenario. */
export interface DashboardBench {
  hub: string;
  /** The typed client, signed in as the admin. */
  asAdmin: HubClient;
  adminCredentials: { email: string; password: string };
  newProject: (name: string) => Promise<string>;
  pool: <T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>) => Promise<R[]>;
  report: (line: string) => void;
  fmt: (n: number, digits?: number) => string;
}

export async function benchDashboard({ hub, asAdmin, adminCredentials, newProject, pool, report, fmt }: DashboardBench) {
  if (!existsSync(CHROMIUM_PATH)) return report(`  dashboard: skipped (no Chromium at ${CHROMIUM_PATH}; apt-get install chromium)`);
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${hub}/`);
    await page.getByLabel("Email").fill(adminCredentials.email);
    await page.getByLabel("Password").fill(adminCredentials.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();

    // (a) A board of 1,000 tasks: from navigation to every card shown, filters usable.
    const big = await newProject("Board of 1,000");
    const createTask = async (body: NewTask) => {
      const { data, error, response } = await asAdmin.POST("/api/v1/tasks", { body });
      if (!data) throw new Error(`POST /api/v1/tasks: ${response.status} ${JSON.stringify(error)}`);
      return data.id;
    };
    const priorities = ["low", "normal", "high", "critical"] as const;
    await pool(Array.from({ length: 1000 }), 16, (_, i) => createTask({ project_id: big, title: `Task ${i}`, priority: priorities[i % 4] }));
    const openBoard = async (projectId: string, cards: number) => {
      const started = performance.now();
      await page.goto(`${hub}/projects/${projectId}/board`);
      await page.locator(".board[data-loaded=true]").waitFor({ timeout: 30_000 });
      await page.waitForFunction((n) => document.querySelectorAll(".card").length === n, cards, { timeout: 30_000 });
      return performance.now() - started;
    };
    const empty = await newProject("Empty board");
    const emptyMs = median([await openBoard(empty, 0), await openBoard(empty, 0), await openBoard(empty, 0)]);
    const bigMs = median([await openBoard(big, 1000), await openBoard(big, 1000), await openBoard(big, 1000)]);
    let started = performance.now();
    let cursor: string | undefined;
    do {
      const page = await asAdmin.GET("/api/v1/tasks", { params: { query: { project_id: big, limit: 200, cursor } } });
      if (!page.data) throw new Error(`GET /api/v1/tasks: ${page.response.status} ${JSON.stringify(page.error)}`);
      cursor = page.data.next_cursor ?? undefined;
    } while (cursor);
    const readMs = performance.now() - started;
    report(
      `  board of 1,000 tasks usable in Chromium: ${fmt(bigMs, 0)} ms (median of 3, from navigation to every card shown; target ≤ 1500 ms)` +
        `   | an empty board: ${fmt(emptyMs, 0)} ms; reading the 1,000 tasks over the API from Node: ${fmt(readMs, 0)} ms`,
    );

    // (a') The graph of 500 tasks, each depending on the one before it in a binary tree: layout and drawing.
    const tree = await newProject("Graph of 500");
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) {
      const dependencies: NewTask["dependencies"] =
        i === 0
          ? []
          : [
              i % 3 === 0
                ? { depends_on_task_id: ids[(i - 1) >> 1]!, dependency_type: "input", contract_key: "out" }
                : { depends_on_task_id: ids[(i - 1) >> 1]!, dependency_type: "blocks" },
            ];
      ids.push(await createTask({ project_id: tree, title: `Node ${i}`, dependencies }));
    }
    const openGraph = async (projectId: string, nodes: number) => {
      const began = performance.now();
      await page.goto(`${hub}/projects/${projectId}/graph`);
      await page.waitForFunction((n) => document.querySelectorAll(".graph[data-loaded=true] .node").length === n, nodes, { timeout: 60_000 });
      return performance.now() - began;
    };
    const graphMs = median([await openGraph(tree, 500), await openGraph(tree, 500), await openGraph(tree, 500)]);
    report(
      `  graph of 500 tasks (499 dependencies) laid out and drawn: ${fmt(graphMs, 0)} ms (median of 3, from navigation)   | the board of 1,000 tasks: ${fmt(bigMs, 0)} ms`,
    );

    // (b) 100 events a second for 10 seconds to an open board: each creation must show up.
    const busy = await newProject("Busy board");
    await page.goto(`${hub}/projects/${busy}/board`);
    await page.locator("[data-feed=live]").waitFor();
    const creations: Promise<string>[] = [];
    started = performance.now();
    for (let tick = 0; tick < 100; tick++) {
      for (let i = 0; i < 10; i++) creations.push(createTask({ project_id: busy, title: `Live ${tick}.${i}` }));
      const due = started + (tick + 1) * 100;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    }
    await Promise.all(creations);
    const createdAt = performance.now();
    const rate = 1000 / ((createdAt - started) / 1000);
    let shown = 0;
    try {
      await page.waitForFunction(() => document.querySelectorAll(".card").length >= 1000, null, { timeout: 30_000, polling: 50 });
    } finally {
      shown = await page.locator(".card").count();
    }
    report(
      `  100 task creations/s for 10 s on an open board: ${shown}/1000 shown, events lost: ${1000 - shown}, all shown ${fmt(performance.now() - createdAt, 0)} ms after the last creation answered` +
        `   | the creations ran at ${fmt(rate, 0)}/s`,
    );
  } finally {
    await browser.close();
  }
}
