/**
 * What a batch writes once for all its operations, after their own
 * statements (src/room/statements.ts): their events, each operation's only if
 * its guard holds then, in the operations' order and numbered without gaps;
 * and the dependencies on the tasks they completed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { appendEvents, updateTask, type EventAppend, type TaskRow } from "../src/room/statements";

const now = "2026-11-23T00:00:00.000Z";

async function project() {
  const id = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'events', ?1, ?2, ?2)").bind(id, now).run();
  return id;
}

async function task(projectId: string): Promise<TaskRow> {
  const id = crypto.randomUUID();
  await env.DB.prepare(
    `INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, traceparent, created_at, updated_at)
     VALUES (?1, ?2, 't', 's', 'feature', 'normal', 'pending', '[]', 'test', '[]', ?3, ?4, ?4)`,
  )
    .bind(id, projectId, `00-${"a".repeat(32)}-${"b".repeat(16)}-01`, now)
    .run();
  return { id, version: 1 } as TaskRow;
}

const note = (taskId: string | null, text: string) => ({ type: "note_added" as const, taskId, data: { text } });

async function eventsOf(projectId: string) {
  const { results } = await env.DB.prepare("SELECT seq, type, task_id, actor, data, traceparent, created_at FROM events WHERE project_id = ?1 ORDER BY seq")
    .bind(projectId)
    .all<{ seq: number; task_id: string | null; actor: string; data: string; traceparent: string | null; created_at: string }>();
  return results.map((r) => ({ ...r, data: JSON.parse(r.data) as { text: string } }));
}

describe("appending a batch's events", () => {
  it("writes each operation's events as its actor at its time, in order, skipping those whose update did not apply, with no gap in seqs", async () => {
    const projectId = await project();
    const [moved, untouched] = [await task(projectId), await task(projectId)];
    const appends: EventAppend[] = [
      { actor: "a", at: "2026-11-23T00:00:01.000Z", events: [note(moved.id, "first"), note(moved.id, "second")], guard: { taskId: moved.id, version: 2 } },
      // Its update did not apply: the task is still at version 1.
      { actor: "b", at: "2026-11-23T00:00:02.000Z", events: [note(untouched.id, "lost")], guard: { taskId: untouched.id, version: 2 } },
      // A later operation of the batch moved the task past the version this one set.
      { actor: "c", at: "2026-11-23T00:00:03.000Z", events: [note(moved.id, "third")], guard: { taskId: moved.id, version: 2 } },
      { actor: "d", at: "2026-11-23T00:00:04.000Z", events: [note(null, "unguarded")], guard: null },
      { actor: "e", at: "2026-11-23T00:00:05.000Z", events: [note(null, "no such session")], guard: { sessionId: crypto.randomUUID(), updatedAt: now } },
    ];
    const writes = [updateTask(env.DB, moved, { progress: 0.5 }, now), updateTask(env.DB, { ...moved, version: 2 }, { progress: 0.6 }, now)];
    const batch = [...writes, ...appendEvents(env.DB, projectId, appends)];
    expect(batch).toHaveLength(3);
    await env.DB.batch(batch);

    const events = await eventsOf(projectId);
    expect(events.map((e) => [e.seq, e.data.text, e.actor, e.created_at])).toEqual([
      [1, "first", "a", "2026-11-23T00:00:01.000Z"],
      [2, "second", "a", "2026-11-23T00:00:01.000Z"],
      [3, "third", "c", "2026-11-23T00:00:03.000Z"],
      [4, "unguarded", "d", "2026-11-23T00:00:04.000Z"],
    ]);
    // An event about a task carries the task's trace context.
    expect(events[0]!.traceparent).toMatch(/^00-a{32}-b{16}-01$/);
    expect(events[3]!.traceparent).toBeNull();
  });

  it("splits very large events over several statements that still number them in order", async () => {
    const projectId = await project();
    const big = "x".repeat(200 * 1024);
    const appends: EventAppend[] = Array.from({ length: 6 }, (_, i) => ({ actor: "a", at: now, events: [note(null, `${i}${big}`)], guard: null }));
    const statements = appendEvents(env.DB, projectId, appends);
    expect(statements.length).toBeGreaterThan(1);
    await env.DB.batch(statements);
    const events = await eventsOf(projectId);
    expect(events.map((e) => [e.seq, e.data.text[0]])).toEqual(appends.map((_, i) => [i + 1, String(i)]));
  });

  it("numbers one operation's events in order after those already there, and writes none when its update did not apply", async () => {
    const projectId = await project();
    const [moved, untouched] = [await task(projectId), await task(projectId)];
    const one = (t: TaskRow, version: number, texts: string[]): EventAppend[] => [
      { actor: "a", at: now, events: texts.map((x) => note(t.id, x)), guard: { taskId: t.id, version } },
    ];
    await env.DB.batch([updateTask(env.DB, moved, { progress: 0.5 }, now), ...appendEvents(env.DB, projectId, one(moved, 2, ["first", "second"]))]);
    // Its update did not apply (the task is still at version 1): none of its events is written.
    await env.DB.batch(appendEvents(env.DB, projectId, one(untouched, 2, ["lost", "lost too"])));
    await env.DB.batch([
      updateTask(env.DB, { ...moved, version: 2 }, { progress: 0.6 }, now),
      ...appendEvents(env.DB, projectId, one(moved, 3, ["third", "fourth", "fifth"])),
    ]);
    const events = await eventsOf(projectId);
    expect(events.map((e) => [e.seq, e.data.text])).toEqual([
      [1, "first"],
      [2, "second"],
      [3, "third"],
      [4, "fourth"],
      [5, "fifth"],
    ]);
  });

  it("writes nothing for operations without events", () => {
    expect(appendEvents(env.DB, "p", [{ actor: "a", at: now, events: [], guard: null }])).toEqual([]);
  });
});
