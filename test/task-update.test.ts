/**
 * The room's task update is written as SQL directly (src/room/statements.ts):
 * whatever fields it sets, it must store exactly what drizzle's builder would.
 * Two copies of one task are updated, one each way, and read back as stored.
 */
import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { PRIORITIES, tasks } from "../src/db/schema";
import { TASK_STATUSES } from "../src/domain/lifecycle";
import { updateTask, type TaskRow } from "../src/room/statements";

const db = createDb(env.DB);
const now = "2026-11-23T00:00:00.000Z";

const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const object = fc.dictionary(fc.string({ maxLength: 8 }), json, { maxKeys: 4, noNullPrototype: true });
const text = fc.string({ maxLength: 40 });
/** A value of the right type for each field the room sets. */
const fields = {
  status: fc.constantFrom(...TASK_STATUSES),
  priority: fc.constantFrom(...PRIORITIES),
  result: fc.option(object),
  resultStructured: fc.boolean(),
  errorCode: fc.option(text),
  error: fc.option(object),
  progress: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
  progressMessage: fc.option(text),
  plan: fc.option(json),
  planFeedback: fc.option(text),
  requirePlan: fc.boolean(),
  targetSessionId: fc.constant(null),
  deadlineAt: fc.option(fc.date({ noInvalidDate: true }).map((d) => d.toISOString())),
  warnings: fc.array(text, { maxLength: 3 }),
  retryCount: fc.nat(50),
  lateResult: fc.option(json),
  rejectedBy: fc.array(fc.uuid(), { maxLength: 3 }),
  assignedAt: fc.option(text),
  startedAt: fc.option(text),
  completedAt: fc.option(text),
  timeoutSeconds: fc.option(fc.integer({ min: 1, max: 86_400 })),
};
const sets = fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Partial<TaskRow>>;

async function newTask(projectId: string): Promise<TaskRow> {
  const [row] = await db
    .insert(tasks)
    .values({
      id: crypto.randomUUID(),
      projectId,
      title: "t",
      spec: "s",
      type: "feature",
      priority: "normal",
      status: "pending",
      acceptanceCriteria: [],
      createdBy: "test",
      warnings: [],
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return row!;
}

/** The row as stored, every column as D1 holds it (no decoding), without its id. */
async function stored(id: string) {
  const row = await env.DB.prepare("SELECT * FROM tasks WHERE id = ?1").bind(id).first<Record<string, unknown>>();
  const { id: _, ...rest } = row!;
  return rest;
}

describe("the room's task update", () => {
  it("stores what drizzle's update would, for any fields set", async () => {
    const projectId = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'updates', ?1, ?2, ?2)").bind(projectId, now).run();
    await fc.assert(
      fc.asyncProperty(sets, async (set) => {
        const [ours, theirs] = [await newTask(projectId), await newTask(projectId)];
        const later = "2026-11-23T00:00:01.000Z";
        const { meta } = await updateTask(env.DB, ours, set, later).run();
        await db
          .update(tasks)
          .set({ ...set, version: theirs.version + 1, updatedAt: later })
          .where(and(eq(tasks.id, theirs.id), eq(tasks.version, theirs.version)));
        // The room reads whether it applied from the rows it changed (none, or the task's: a change of status adds the
        // roll-up rows migration 0032's triggers write, which only an applied update fires).
        expect(meta.changes).toBeGreaterThanOrEqual(1);
        expect(await stored(ours.id)).toEqual(await stored(theirs.id));
      }),
      { numRuns: 60 },
    );
  });

  it("changes nothing when the task's version moved on", async () => {
    const projectId = crypto.randomUUID();
    await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'stale', ?1, ?2, ?2)").bind(projectId, now).run();
    const task = await newTask(projectId);
    await updateTask(env.DB, task, { status: "assigned" }, now).run();
    const { meta } = await updateTask(env.DB, task, { status: "cancelled" }, now).run();
    expect(meta.changes).toBe(0);
    expect(await stored(task.id)).toMatchObject({ status: "assigned", version: 2 });
  });

  it("refuses a field the table does not have", () => {
    expect(() => updateTask(env.DB, { id: "x", version: 1 } as TaskRow, { nonsense: 1 } as Partial<TaskRow>, now)).toThrow(/no field nonsense/);
  });
});
