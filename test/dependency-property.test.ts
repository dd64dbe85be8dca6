/**
 * Property: over random DAGs of typed dependencies and random completion
 * orders, a task is unblocked exactly when all its blocks/input upstreams
 * are done, and never earlier — checked against the hub over HTTP, and
 * against the flag each task's row keeps.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { call, createProject, expectProblem } from "./helpers";
import { cli, createWorld, expectOk, openSession, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Property");
});

const dependencyType = fc.constantFrom("blocks", "input", "related");
const dag = fc.integer({ min: 2, max: 7 }).chain((n) =>
  fc.record({
    // edges[j] lists, for task j, its upstreams among tasks 0..j-1 with a type each.
    edges: fc.tuple(...Array.from({ length: n }, (_, j) => fc.subarray([...Array(j).keys()]).chain((ups) => fc.tuple(...ups.map((u) => fc.tuple(fc.constant(u), dependencyType)))))),
    picks: fc.array(fc.nat(), { minLength: n, maxLength: n }),
    withContracts: fc.boolean(),
  }),
);

it("unblocks a task exactly when all its blocking upstreams are done", async () => {
  await fc.assert(
    fc.asyncProperty(dag, async ({ edges, picks, withContracts }) => {
      const project = await createProject(w.admin, "dag");
      const session = `worker-${project.id.slice(0, 8)}`;
      await openSession(w.worker.apiKey, project.id, session);
      const ids: string[] = [];
      for (const ups of edges) {
        const dependencies = ups.map(([u, type]) => ({ depends_on_task_id: ids[u], dependency_type: type, ...(type === "input" ? { contract_key: `c${u}` } : {}) }));
        const created = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: `t${ids.length}`, project_id: project.id, dependencies }), 201);
        ids.push(created.json.id);
        await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${created.json.id}/assign`, { session_name: session }));
      }
      const done = new Set<number>();
      const blockedInModel = (j: number) => edges[j]!.some(([u, type]) => type !== "related" && !done.has(u));

      const checkAll = async () => {
        const list = await expectOk(call(`/api/v1/tasks?project_id=${project.id}&limit=200`, { token: w.admin }));
        const blocked = new Map(list.json.tasks.map((t: { id: string; blocked: boolean }) => [t.id, t.blocked]));
        ids.forEach((id, j) => expect({ task: j, blocked: blocked.get(id) }).toEqual({ task: j, blocked: blockedInModel(j) }));
        // The flag stored on each row (which indexes the tasks ready to run) agrees too.
        const { results } = await env.DB.prepare("SELECT id, blocked FROM tasks WHERE project_id = ?1").bind(project.id).all<{ id: string; blocked: number }>();
        const stored = new Map(results.map((r) => [r.id, Boolean(r.blocked)]));
        ids.forEach((id, j) => expect({ task: j, stored: stored.get(id) }).toEqual({ task: j, stored: blockedInModel(j) }));
      };

      await checkAll();
      for (const pick of picks) {
        const ready = ids.map((_, j) => j).filter((j) => !done.has(j) && !blockedInModel(j));
        const waiting = ids.map((_, j) => j).filter((j) => !done.has(j) && blockedInModel(j));
        if (waiting.length) {
          // Never earlier: a task the model says is blocked cannot start.
          expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${ids[waiting[pick % waiting.length]!]}/start`), 409, "UNRESOLVED_DEPENDENCIES");
        }
        if (ready.length === 0) break;
        const j = ready[pick % ready.length]!;
        await expectOk(cli(w.worker.apiKey, "POST", `${T}/${ids[j]}/start`));
        const result = withContracts ? { $schema: "orchestratia/task-result/v1", summary: `t${j}`, contracts: { [`c${j}`]: { data: j } } } : `t${j}`;
        await expectOk(cli(w.worker.apiKey, "POST", `${T}/${ids[j]}/complete`, { result }));
        done.add(j);
        await checkAll();
      }
      expect(done.size).toBe(ids.length);
      // A task created on upstreams already done is stored unblocked; one on an upstream still pending, blocked.
      const late = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "late", project_id: project.id, dependencies: ids.map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" })) }), 201);
      const later = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "later", project_id: project.id, dependencies: [{ depends_on_task_id: late.json.id, dependency_type: "blocks" }] }), 201);
      const flag = (id: string) => env.DB.prepare("SELECT blocked FROM tasks WHERE id = ?1").bind(id).first<number>("blocked");
      expect({ late: await flag(late.json.id), later: await flag(later.json.id) }).toEqual({ late: 0, later: 1 });
    }),
    { numRuns: 25 },
  );
});
