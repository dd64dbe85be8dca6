/**
 * What the archiver weighs a finished task by when it chooses a batch (src/archive/task-source.ts): its events are
 * counted in the blocks of the log that hold them, so two tasks whose events together pass BATCH_ROWS go in separate
 * batches, and two light ones go together.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_ROWS } from "../src/archive/plan";
import { taskSource } from "../src/archive/task-source";
import { LOG_BLOCK } from "../src/db/task-events";
import { cli, createWorld, expectOk, newTask, T, worldUnder, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Archive weights");
});

const LONG_AGO = new Date(Date.now() - 60 * 24 * 3600 * 1000).toISOString();
const CUTOFF = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();

/** Two tasks of a fresh project, done two months ago; `later` is a task that moves the log on past them (a task holding the log's last event stays). */
async function twoOldTasks(name: string) {
  const mine = { ...w, ...(await worldUnder(w.admin, name)) };
  const ids = [await newTask(mine), await newTask(mine)];
  for (const id of ids) {
    await expectOk(cli(mine.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(mine.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(mine.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "ok" } }));
  }
  await env.DB.prepare("UPDATE tasks SET completed_at = ?2 WHERE project_id = ?1").bind(mine.project.id, LONG_AGO).run();
  return { projectId: mine.project.id, ids, later: () => newTask(mine) };
}

/** `n` progress events of the task appended to the log (the log's trigger lists the blocks they reach for the task). */
const progress = (projectId: string, taskId: string, n: number) =>
  env.DB.prepare(
    `INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at)
     WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?3)
     SELECT ?1, (SELECT MAX(seq) FROM events WHERE project_id = ?1) + i, 'task_progress', ?2, 'agent', '{"message":"working"}', ?4 FROM k`,
  )
    .bind(projectId, taskId, n, LONG_AGO)
    .run();

describe("a batch of finished tasks", () => {
  it("holds two light tasks together", async () => {
    const { projectId, ids, later } = await twoOldTasks("Light");
    await later();
    expect((await taskSource(env.DB, projectId).due(CUTOFF))?.ids.sort()).toEqual([...ids].sort());
  });

  it("leaves out a task whose events would take it past the rows a batch holds, counting events beyond the first block", async () => {
    const { projectId, ids, later } = await twoOldTasks("Heavy");
    const each = Math.ceil(BATCH_ROWS / 2) + 50;
    for (const id of ids) await progress(projectId, id, each);
    await later();
    // The second task's events run into the next block of the log.
    expect(each * 2).toBeGreaterThan(LOG_BLOCK);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM task_log_blocks WHERE task_id = ?1").bind(ids[1]).first<{ n: number }>())!.n).toBe(1);
    const due = await taskSource(env.DB, projectId).due(CUTOFF);
    expect(due?.ids).toHaveLength(1);
  });
});
