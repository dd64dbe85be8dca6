/**
 * What the sessions working on a task's dependents hear of it, with the
 * daemons faked as hub.py speaks: its completion, and notes marked for them,
 * as `note_for_session` with `mentioned_via: "dependency"` (which the daemon
 * queues in the agent's inbox as `[upstream] …`). Only unfinished dependents
 * that are given to an open session hear, each session once.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { aTraceparent, call } from "./helpers";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
/** The daemon of the world's worker (the upstream's agent), and of the orchestrator's server, which runs the dependents' sessions. */
let upstreamDaemon: FakeDaemon;
let daemon: FakeDaemon;
let reviewer: string;
let watcher: string;

beforeAll(async () => {
  w = await createWorld("Upstream notes");
  upstreamDaemon = await fakeDaemon(w.worker.apiKey);
  daemon = await fakeDaemon(w.orchestrator.apiKey);
  reviewer = await openSession(w.orchestrator.apiKey, w.project.id, "reviewer");
  watcher = await openSession(w.orchestrator.apiKey, w.project.id, "watcher");
});

const assignTo = (id: string, session: string) => expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: session }));
const dependsOn = (up: string, type: "blocks" | "input" | "related" = "blocks") => ({
  dependencies: [{ depends_on_task_id: up, dependency_type: type, ...(type === "input" ? { contract_key: "schema" } : {}) }],
});
const dependencyNotes = (d: FakeDaemon, taskId: string) => d.socket.frames.filter((f) => f.type === "note_for_session" && f.task_id === taskId);

/** An upstream running in the worker's session, and dependents of every kind around it. */
async function upstreamWithDependents(title: string) {
  const up = await newTask(w, { title });
  await assignTo(up, "worker");
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
  const blocked = await newTask(w, { title: "Review it", ...dependsOn(up) });
  await assignTo(blocked, "reviewer");
  const fed = await newTask(w, { title: "Use it", ...dependsOn(up, "input") });
  await assignTo(fed, "orchestrator");
  // None of these hear: not given to a session, finished, only related, or worked on in the upstream's own session.
  await newTask(w, { title: "Nobody's yet", ...dependsOn(up) });
  const dropped = await newTask(w, { title: "Dropped", ...dependsOn(up) });
  await assignTo(dropped, "watcher");
  await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${dropped}`));
  const related = await newTask(w, { title: "Loosely related", ...dependsOn(up, "related") });
  await assignTo(related, "watcher");
  const sameSession = await newTask(w, { title: "Next in the same session", ...dependsOn(up) });
  await assignTo(sameSession, "worker");
  return up;
}

/** Waits until a push that commits after everything before it reaches the upstream's daemon (pushes go out in commit order). */
async function pushesSettled(up: string) {
  const marker = `settled ${crypto.randomUUID().slice(0, 8)}`;
  await expectOk(call(`/api/v1/tasks/${up}/notes`, { token: w.member.token, body: { content: marker } }), 201);
  await upstreamDaemon.socket.next((f) => f.type === "task_note" && f.content === marker);
}

describe("an upstream's completion", () => {
  it("reaches the sessions working on its unfinished dependents, once each, as [upstream] notes", async () => {
    const up = await upstreamWithDependents("Design the schema");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result: { summary: "Schema v3 ready" } }));
    const content = `The upstream task "Design the schema" (#${up.slice(0, 8)}) is done: Schema v3 ready`;
    const told = await daemon.socket.collect(2, (f) => f.type === "note_for_session" && f.task_id === up);
    expect(told.sort((a, b) => (a.target_session_id === reviewer ? -1 : b.target_session_id === reviewer ? 1 : 0))).toEqual(
      [reviewer, w.orchestratorSession].map((session) => ({
        type: "note_for_session",
        target_session_id: session,
        task_id: up,
        content,
        author: `agent:${w.worker.name}`,
        mentioned_via: "dependency",
        traceparent: aTraceparent(),
      })),
    );
    expect(daemon.shown(reviewer).at(-1)).toEqual({ via: "inbox", content: `[upstream] ${content}`, author: `agent:${w.worker.name}` });
    await pushesSettled(up);
    expect(dependencyNotes(daemon, up)).toHaveLength(2);
    expect(daemon.shown(watcher).filter((s) => s.via === "inbox")).toEqual([]);
    expect(dependencyNotes(upstreamDaemon, up)).toEqual([]);
  });

  it("says nothing when no dependent is given to a session", async () => {
    const up = await newTask(w, { title: "Alone" });
    await newTask(w, { title: "Waiting for it", ...dependsOn(up) });
    await assignTo(up, "worker");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result: "done" }));
    await pushesSettled(up);
    expect(dependencyNotes(daemon, up)).toEqual([]);
  });
});

describe("a note marked for dependents", () => {
  it("reaches the same sessions, from a person or from the upstream's agent; an unmarked note does not", async () => {
    const up = await upstreamWithDependents("Migrate the users");
    await expectOk(call(`/api/v1/tasks/${up}/notes`, { token: w.member.token, body: { content: "Not for them" } }), 201);
    const noted = await expectOk(
      call(`/api/v1/tasks/${up}/notes`, { token: w.member.token, body: { content: "users.email is now users.login", notify_dependents: true } }),
      201,
    );
    expect(noted.json).toMatchObject({ task_id: up, content: "users.email is now users.login", author: w.member.email });
    const content = `Note on upstream task "Migrate the users" (#${up.slice(0, 8)}): users.email is now users.login`;
    const told = await daemon.socket.collect(2, (f) => f.type === "note_for_session" && f.task_id === up);
    expect(told.map((f) => [f.target_session_id, f.content, f.author, f.mentioned_via]).sort()).toEqual(
      [
        [reviewer, content, w.member.email, "dependency"],
        [w.orchestratorSession, content, w.member.email, "dependency"],
      ].sort(),
    );
    // The upstream's own session has the note as its task's (task_note), not as an upstream's.
    expect(await upstreamDaemon.socket.next((f) => f.type === "task_note" && f.content === "users.email is now users.login")).toMatchObject({
      session_id: w.workerSession,
      task_id: up,
    });
    const events = (await call(`/api/v1/tasks/${up}/events`, { token: w.member.token })).json.events.filter((e: any) => e.type === "note_added");
    expect(events.map((e: any) => e.data.notify_dependents ?? false)).toEqual([false, true]);

    // The upstream's agent marks one too (the agent surface takes the same body).
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/notes`, { content: "Index rebuilt", notify_dependents: true }), 201);
    const fromAgent = await daemon.socket.collect(4, (f) => f.type === "note_for_session" && f.task_id === up);
    expect(fromAgent.slice(2).map((f) => f.author)).toEqual([`agent:${w.worker.name}`, `agent:${w.worker.name}`]);
    await pushesSettled(up);
    expect(dependencyNotes(daemon, up)).toHaveLength(4);
  });

  it("tells a dependent's session that the note also mentions once, as a mention", async () => {
    const up = await upstreamWithDependents("Both ways");
    await expectOk(call(`/api/v1/tasks/${up}/notes`, { token: w.member.token, body: { content: "@reviewer look at this", notify_dependents: true } }), 201);
    await daemon.socket.collect(2, (f) => f.type === "note_for_session" && f.task_id === up);
    await pushesSettled(up);
    expect(
      dependencyNotes(daemon, up)
        .map((f) => [f.target_session_id, f.mentioned_via])
        .sort(),
    ).toEqual(
      [
        [reviewer, "mention"],
        [w.orchestratorSession, "dependency"],
      ].sort(),
    );
  });

  it("refuses a notify_dependents that is not a boolean", async () => {
    const up = await newTask(w);
    const refused = await call(`/api/v1/tasks/${up}/notes`, { token: w.member.token, body: { content: "x", notify_dependents: "yes" } });
    expect(refused.status).toBe(422);
    expect(refused.json.errors.map((e: any) => e.path)).toEqual(["notify_dependents"]);
  });
});
