/**
 * What a batch writes once for all its operations, after their own
 * statements (src/room/event-append.ts): their events, each operation's only if
 * its guard holds then, in the operations' order and numbered without gaps,
 * and what the room learns of them without reading them back;
 * and the dependencies on the tasks they completed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EventLog, logMovedOn } from "../src/room/event-append";
import { updateTask, type CommittedEvent, type EventAppend, type TaskRow } from "../src/room/statements";

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
  return { id, version: 1, traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` } as TaskRow;
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
    const append = new EventLog(env.DB, projectId).append(appends);
    // Its task events come with no trace context: one insert that takes the tasks' and returns what it wrote.
    expect(append.statements).toHaveLength(1);
    const results = await env.DB.batch([...writes, ...append.statements]);
    const appended = append.read(results.slice(writes.length));
    expect("events" in appended && appended.events.map((e) => [e.seq, e.actor])).toEqual([
      [1, "a"],
      [2, "a"],
      [3, "c"],
      [4, "d"],
    ]);

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
    const log = new EventLog(env.DB, projectId);
    for (const round of [0, 1]) {
      const append = log.append(appends);
      expect(append.statements.length).toBeGreaterThan(2);
      const appended = append.read(await env.DB.batch(append.statements));
      expect("events" in appended && appended.events.map((e) => [e.seq, (e.data.text as string)[0]])).toEqual(
        appends.map((_, i) => [6 * round + i + 1, String(i)]),
      );
      log.took("events" in appended ? appended.head : null);
    }
    const events = await eventsOf(projectId);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // Something else appended after the end the log knows: the first statement fails on the primary key, writing nothing.
    await env.DB.prepare("INSERT INTO events (project_id, seq, type, actor, data, created_at) VALUES (?1, 13, 'note_added', 'x', '{}', ?2)")
      .bind(projectId, now)
      .run();
    const moved = log.append(appends);
    await expect(env.DB.batch(moved.statements)).rejects.toSatisfy(logMovedOn);
    expect((await eventsOf(projectId)).map((e) => e.seq).at(-1)).toBe(13);
  });

  it("numbers one operation's events in order after those already there, and writes none when its update did not apply", async () => {
    const projectId = await project();
    const [moved, untouched] = [await task(projectId), await task(projectId)];
    const one = (t: TaskRow, version: number, texts: string[]): EventAppend[] => [
      { actor: "a", at: now, events: texts.map((x) => ({ ...note(t.id, x), traceparent: t.traceparent })), guard: { taskId: t.id, version } },
    ];
    const log = new EventLog(env.DB, projectId);
    const appended: unknown[] = [];
    const commit = async (writes: D1PreparedStatement[], appends: EventAppend[]) => {
      const append = log.append(appends);
      const results = await env.DB.batch([...writes, ...append.statements]);
      const read = append.read(results.slice(writes.length));
      if ("events" in read) log.took(read.head);
      appended.push(read);
      return append.statements.length;
    };
    expect(await commit([updateTask(env.DB, moved, { progress: 0.5 }, now)], one(moved, 2, ["first", "second"]))).toBe(2);
    // Its update did not apply (the task is still at version 1): none of its events is written.
    expect(await commit([], one(untouched, 2, ["lost", "lost too"]))).toBe(1);
    // Known now where the log ends, the room asks no more.
    expect(await commit([updateTask(env.DB, { ...moved, version: 2 }, { progress: 0.6 }, now)], one(moved, 3, ["third", "fourth", "fifth"]))).toBe(1);
    const events = await eventsOf(projectId);
    expect(events.map((e) => [e.seq, e.data.text])).toEqual([
      [1, "first"],
      [2, "second"],
      [3, "third"],
      [4, "fourth"],
      [5, "fifth"],
    ]);
    // What the room learnt from how many rows each insert wrote is what the log holds.
    const learnt = appended.flatMap((a) => ("events" in (a as object) ? (a as { events: CommittedEvent[] }).events : []));
    expect(learnt).toEqual((await log.since(0)).map((e) => ({ ...e })));
    expect(learnt.map((e) => e.traceparent)).toEqual(events.map(() => moved.traceparent));
  });

  it("reads back what a batch wrote when it cannot tell, and where the log ends after a batch whose outcome is unknown", async () => {
    const projectId = await project();
    const [moved, untouched] = [await task(projectId), await task(projectId)];
    const log = new EventLog(env.DB, projectId);
    const append = log.append([
      { actor: "a", at: now, events: [{ ...note(moved.id, "moved"), traceparent: moved.traceparent }], guard: { taskId: moved.id, version: 2 } },
      { actor: "b", at: now, events: [{ ...note(untouched.id, "lost"), traceparent: null }], guard: { taskId: untouched.id, version: 2 } },
    ]);
    const read = append.read(await env.DB.batch([updateTask(env.DB, moved, { progress: 0.5 }, now), ...append.statements]).then((r) => r.slice(1)));
    // One guard held, one did not: the room reads what follows where the log ended.
    expect(read).toEqual({ since: 0 });
    const written = await log.since(0);
    expect(written.map((e) => [e.seq, e.data.text, e.traceparent])).toEqual([[1, "moved", moved.traceparent]]);
    log.took(written.at(-1)!.seq);
    // Given no trace context, the insert takes its task's and returns its rows.
    const traced = log.append([{ actor: "c", at: now, events: [note(moved.id, "traced")], guard: null }]);
    const back = traced.read(await env.DB.batch(traced.statements));
    expect("events" in back && back.events.map((e) => [e.seq, e.traceparent])).toEqual([[2, moved.traceparent]]);
    log.took("events" in back ? back.head : null);
    const known = log.append([{ actor: "c", at: now, events: [note(null, "known")], guard: null }]);
    expect(known.statements).toHaveLength(1);
    // Built but never taken in (the batch failed, or its answer never came): it asks again where the log ends.
    log.append([{ actor: "x", at: now, events: [note(null, "never sent")], guard: null }]);
    const again = log.append([{ actor: "d", at: now, events: [note(null, "after")], guard: null }]);
    expect(again.statements).toHaveLength(2);
    const after = again.read(await env.DB.batch(again.statements));
    expect("events" in after && after.events.map((e) => e.seq)).toEqual([3]);
    expect("events" in after && after.head).toBe(3);
  });

  it("hands on with the next batch what it could not read back once its batch had committed", async () => {
    const projectId = await project();
    const [moved, untouched] = [await task(projectId), await task(projectId)];
    let failures = 1;
    // The binding, but its read of the events after a seq fails once, as D1 can after the batch committed.
    const flaky = new Proxy(env.DB, {
      get(target, prop) {
        if (prop !== "prepare") return Reflect.get(target, prop, target);
        return (query: string) =>
          query.includes("seq > ?2") && failures-- > 0 ? { bind: () => ({ all: () => Promise.reject(new Error("D1 went away")) }) } : target.prepare(query);
      },
    });
    const log = new EventLog(flaky, projectId);
    const append = log.append([
      { actor: "a", at: now, events: [{ ...note(moved.id, "moved"), traceparent: null }], guard: { taskId: moved.id, version: 2 } },
      { actor: "b", at: now, events: [{ ...note(untouched.id, "lost"), traceparent: null }], guard: { taskId: untouched.id, version: 2 } },
    ]);
    const read = append.read(await env.DB.batch([updateTask(env.DB, moved, { progress: 0.5 }, now), ...append.statements]).then((r) => r.slice(1)));
    const first = await log.written(read);
    expect([first.events, first.readBack, String(first.failure)]).toEqual([[], true, "Error: D1 went away"]);
    // The next batch's events are known from its statements, yet it reads back from where the first one's began.
    const next = log.append([{ actor: "c", at: now, events: [note(null, "next")], guard: null }]);
    const second = await log.written(next.read(await env.DB.batch(next.statements)));
    expect([second.events.map((e) => [e.seq, e.data.text]), second.readBack, second.failure]).toEqual([
      [
        [1, "moved"],
        [2, "next"],
      ],
      true,
      undefined,
    ]);
    // Handed on, the log's end is known again: the batch after asks for nothing.
    const third = log.append([{ actor: "d", at: now, events: [note(null, "third")], guard: null }]);
    expect(third.statements).toHaveLength(1);
    expect(await log.written(third.read(await env.DB.batch(third.statements)))).toMatchObject({ readBack: false, events: [{ seq: 3 }] });
  });

  it("writes nothing for operations without events", () => {
    expect(new EventLog(env.DB, "p").append([{ actor: "a", at: now, events: [], guard: null }]).statements).toEqual([]);
  });
});
