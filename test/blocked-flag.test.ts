/**
 * Property: whatever statements change a project's dependencies (added, upserted, resolved one at a time or all those
 * on one task at once, retyped, removed, or removed with their upstream task) or complete an upstream (which resolves
 * every dependency on it without writing one), each task's stored `blocked` flag is exactly whether one of its
 * blocks/input dependencies is unresolved. The flag is what the index of tasks ready to run is built on.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { expect, it } from "vitest";

const TASKS = 4;
const dependencyType = fc.constantFrom("blocks", "input", "related");
const pair = fc.tuple(fc.nat(TASKS - 1), fc.nat(TASKS - 1)).filter(([a, b]) => a !== b);
const change = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), pair, type: dependencyType, resolved: fc.boolean() }),
  fc.record({ kind: fc.constant("upsert" as const), pair, type: dependencyType, resolved: fc.boolean() }),
  fc.record({ kind: fc.constant("resolve" as const), pair, resolved: fc.boolean() }),
  fc.record({ kind: fc.constant("retype" as const), pair, type: dependencyType }),
  fc.record({ kind: fc.constant("remove" as const), pair }),
  // As a completion resolves every dependency on its task in one statement.
  fc.record({ kind: fc.constant("resolve_on" as const), task: fc.nat(TASKS - 1) }),
  fc.record({ kind: fc.constant("remove_upstream" as const), task: fc.nat(TASKS - 1) }),
  // As a completion leaves the dependencies on its task as they are.
  fc.record({ kind: fc.constant("complete" as const), task: fc.nat(TASKS - 1) }),
);
type Change = typeof change extends fc.Arbitrary<infer C> ? C : never;

async function projectWithTasks() {
  const projectId = crypto.randomUUID();
  const ids = Array.from({ length: TASKS }, () => crypto.randomUUID());
  await env.DB.batch([
    env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'flags', ?1, '2026', '2026')").bind(projectId),
    ...ids.map((id) =>
      env.DB.prepare(
        `INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, created_at, updated_at)
         VALUES (?1, ?2, 't', '', 'feature', 'normal', 'pending', '[]', 'test', '[]', '2026', '2026')`,
      ).bind(id, projectId),
    ),
  ]);
  return { projectId, ids };
}

/** The values of a dependency, if both its tasks are still there. */
const bothThere = "SELECT ?1, ?2, ?3, ?4, ?5, '2026' WHERE (SELECT count(*) FROM tasks WHERE id IN (?1, ?2)) = 2";

function statementFor(c: Change, projectId: string, ids: string[]) {
  if (c.kind === "complete") return env.DB.prepare("UPDATE tasks SET status = 'done', completed_at = '2026' WHERE id = ?1").bind(ids[c.task]);
  if (c.kind === "remove_upstream") return env.DB.prepare("DELETE FROM tasks WHERE id = ?1").bind(ids[c.task]);
  if (c.kind === "resolve_on") return env.DB.prepare("UPDATE task_dependencies SET resolved = 1 WHERE depends_on_task_id = ?1").bind(ids[c.task]);
  const [taskId, upstream] = [ids[c.pair[0]], ids[c.pair[1]]];
  switch (c.kind) {
    case "insert":
      // A duplicate is ignored, as is a dependency between tasks no longer both there.
      return env.DB.prepare(
        `INSERT OR IGNORE INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, resolved, created_at) ${bothThere}`,
      ).bind(taskId, upstream, projectId, c.type, Number(c.resolved));
    case "upsert":
      return env.DB.prepare(
        `INSERT INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, resolved, created_at) ${bothThere}
         ON CONFLICT (task_id, depends_on_task_id) DO UPDATE SET dependency_type = excluded.dependency_type, resolved = excluded.resolved`,
      ).bind(taskId, upstream, projectId, c.type, Number(c.resolved));
    case "resolve":
      return env.DB.prepare("UPDATE task_dependencies SET resolved = ?3 WHERE task_id = ?1 AND depends_on_task_id = ?2").bind(
        taskId,
        upstream,
        Number(c.resolved),
      );
    case "retype":
      return env.DB.prepare("UPDATE task_dependencies SET dependency_type = ?3 WHERE task_id = ?1 AND depends_on_task_id = ?2").bind(taskId, upstream, c.type);
    case "remove":
      return env.DB.prepare("DELETE FROM task_dependencies WHERE task_id = ?1 AND depends_on_task_id = ?2").bind(taskId, upstream);
  }
}

it("keeps each task's blocked flag equal to its unresolved blocking dependencies", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 12 }), async (changes) => {
      const { projectId, ids } = await projectWithTasks();
      for (const c of changes) {
        await statementFor(c, projectId, ids).run();
        const { results } = await env.DB.prepare(
          `SELECT id, blocked, EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id
             WHERE d.task_id = t.id AND d.dependency_type != 'related' AND d.resolved = 0 AND u.status != 'done') AS expected
           FROM tasks t WHERE project_id = ?1`,
        )
          .bind(projectId)
          .all<{ id: string; blocked: number; expected: number }>();
        for (const row of results) expect({ task: ids.indexOf(row.id), blocked: row.blocked }).toEqual({ task: ids.indexOf(row.id), blocked: row.expected });
      }
    }),
    { numRuns: 60 },
  );
});
