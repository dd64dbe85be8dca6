import { evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { conformingFetch } from "./api-conformance";
import { beforeAll, describe, expect, it } from "vitest";
import { accessTokenUntil, BASE, call, createUser, expectProblem } from "./helpers";
import { dashboard, isEvent, openSocket } from "./sockets";
import { createWorld, newTask, type World } from "./task-world";
import { RESUME_GRACE_MS } from "../src/room/dashboard-socket";

let w: World;
beforeAll(async () => {
  w = await createWorld("Live");
});

const note = (id: string, i: number) => call(`/api/v1/server/tasks/${id}/notes`, { apiKey: w.orchestrator.apiKey, body: { content: `n${i}`, urgent: false } });
const room = () => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id));

describe("connecting", () => {
  it("authenticates with the bearer subprotocol (echoed) or ?access_token=", async () => {
    const viaProtocol = await dashboard(w.project.id, w.member.token);
    expect(viaProtocol.protocol).toBe("bearer");
    const viaQuery = await openSocket(`/api/v1/projects/${w.project.id}/ws?access_token=${w.member.token}`);
    expect(viaQuery.protocol).toBeNull();
    const id = await newTask(w);
    for (const s of [viaProtocol, viaQuery]) expect(await s.next(isEvent)).toMatchObject({ type: "event", event_type: "task_created", task_id: id, project_id: w.project.id });
  });

  it("refuses a bad token, a project the user cannot see, and a plain GET", async () => {
    const upgrade = (path: string, headers: Record<string, string> = {}) => conformingFetch(new Request(BASE + path, { headers: { Upgrade: "websocket", ...headers } }));
    const bad = await upgrade(`/api/v1/projects/${w.project.id}/ws`, { "Sec-WebSocket-Protocol": "bearer, not-a-jwt" });
    expect(bad.status).toBe(401);
    expect(await upgrade(`/api/v1/projects/${w.project.id}/ws`)).toHaveProperty("status", 401);
    const outsider = await createUser(w.admin, "member");
    const refused = await upgrade(`/api/v1/projects/${w.project.id}/ws`, { "Sec-WebSocket-Protocol": `bearer, ${outsider.token}` });
    expect(refused.status).toBe(404);
    expect(refused.webSocket).toBeNull();
    expectProblem(await call(`/api/v1/projects/${w.project.id}/ws`, { token: w.member.token }), 426, "UPGRADE_REQUIRED");
  });

  it("answers pings without waking the room", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    s.send({ type: "ping" });
    expect(await s.next((f) => f.type === "pong")).toEqual({ type: "pong" });
  });
});

describe("events", () => {
  it("delivers the same events to two dashboards in seq order", async () => {
    const a = await dashboard(w.project.id, w.member.token);
    const b = await dashboard(w.project.id, w.admin);
    const id = await newTask(w);
    await Promise.all(Array.from({ length: 20 }, (_, i) => note(id, i)));
    const [fromA, fromB] = await Promise.all([a.collect(21, isEvent), b.collect(21, isEvent)]);
    expect(fromA.map((e) => e.seq)).toEqual(fromB.map((e) => e.seq));
    const seqs = fromA.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(21);
    expect(seqs.at(-1) - seqs[0]).toBe(20);
  });

  it("resumes after a drop: exactly the missed events, then live ones, none twice", async () => {
    const id = await newTask(w);
    const first = await dashboard(w.project.id, w.member.token);
    await note(id, -1);
    const seen = (await first.next((f) => isEvent(f) && f.data.content === "n-1")).seq;
    first.ws.close(1000, "going away");
    for (let i = 0; i < 50; i++) await note(id, i);

    const again = await dashboard(w.project.id, w.member.token);
    again.send({ type: "resume", since: seen });
    // Live events keep coming while the replay runs.
    const live = Promise.all(Array.from({ length: 10 }, (_, i) => note(id, 100 + i)));
    const resumed = await again.next((f) => f.type === "resumed");
    await live;
    const events = await again.collect(60, isEvent);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => seen + 1 + i));
    expect(events.slice(0, 50).map((e) => e.data.content)).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
    expect(resumed.last_seq).toBeGreaterThanOrEqual(seen + 50);
    await new Promise((r) => setTimeout(r, 100));
    expect(again.frames.filter(isEvent)).toHaveLength(60);
  });

  it("sends nothing live to a new socket before the backlog of the resume it sends as its first message", async () => {
    const id = await newTask(w);
    const first = await dashboard(w.project.id, w.member.token);
    await note(id, -1);
    const seen = (await first.next((f) => isEvent(f) && f.data.content === "n-1")).seq;
    first.ws.close(1000, "going away");
    for (let i = 0; i < 5; i++) await note(id, i);
    const again = await dashboard(w.project.id, w.member.token);
    // An event commits between the socket's opening and its resume.
    await note(id, 99);
    again.send({ type: "resume", since: seen });
    await again.next((f) => f.type === "resumed");
    const events = await again.collect(6, isEvent);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 6 }, (_, i) => seen + 1 + i));
    expect(events.map((e) => e.data.content)).toEqual(["n0", "n1", "n2", "n3", "n4", "n99"]);
    await new Promise((r) => setTimeout(r, RESUME_GRACE_MS + 200));
    expect(again.frames.filter(isEvent)).toHaveLength(6);
  });

  it("gives a new socket that never resumes what committed while it could have, in order and once, then live events", async () => {
    const id = await newTask(w);
    const s = await dashboard(w.project.id, w.member.token);
    for (let i = 0; i < 3; i++) await note(id, i);
    expect(s.frames.filter(isEvent)).toHaveLength(0);
    const early = await s.collect(3, isEvent, RESUME_GRACE_MS + 3000);
    await note(id, 3);
    const all = await s.collect(4, isEvent);
    expect(all.map((e) => e.data.content)).toEqual(["n0", "n1", "n2", "n3"]);
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 4 }, (_, i) => early[0].seq + i));
    expect(s.frames.some((f) => f.type === "resumed")).toBe(false);
  });

  it("replays from ?since= on connect before going live, and a later resume sends nothing twice", async () => {
    const id = await newTask(w);
    const log = (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events;
    const start = log.find((e: { task_id: string }) => e.task_id === id).seq;
    for (let i = 0; i < 5; i++) await note(id, i);
    const s = await openSocket(`/api/v1/projects/${w.project.id}/ws?since=${start}`, { "Sec-WebSocket-Protocol": `bearer, ${w.member.token}` });
    await Promise.all(Array.from({ length: 5 }, (_, i) => note(id, 10 + i)));
    const got = await s.collect(10, isEvent);
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: 10 }, (_, i) => start + 1 + i));
    // Resuming from before everything it has seen sends only what it never had: the task's creation.
    s.send({ type: "resume", since: start - 1 });
    await s.next((f) => f.type === "resumed");
    await new Promise((r) => setTimeout(r, 50));
    const seqs = s.frames.filter(isEvent).map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, i) => start + i));
  });

  it("loses no socket and no order when the room is evicted between messages", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    const id = await newTask(w);
    await s.next((f) => isEvent(f) && f.task_id === id);
    await evictDurableObject(room());
    await note(id, 1);
    await evictDurableObject(room());
    await note(id, 2);
    s.send({ type: "ping" });
    const [one, two] = await s.collect(3, (f) => isEvent(f) && f.task_id === id);
    expect([one, two].map((e) => e.event_type)).toEqual(["task_created", "note_added"]);
    const all = (await s.collect(3, (f) => isEvent(f) && f.task_id === id)).map((e) => e.seq);
    expect(all).toEqual([...all].sort((x, y) => x - y));
    expect(await s.next((f) => f.type === "pong")).toEqual({ type: "pong" });
  });

  it("refuses an unknown message and a bad resume", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    s.send({ type: "dance" });
    expect(await s.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_MESSAGE_TYPE" });
    s.send({ type: "resume", since: -4 });
    expect(await s.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_REQUEST" });
    s.send("not json");
    expect(await s.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_REQUEST" });
  });
});

describe("token expiry", () => {
  it("closes a socket whose token expires, with a clear code and reason", async () => {
    const shortLived = await accessTokenUntil(w.member.id, Math.floor(Date.now() / 1000) + 2);
    const s = await dashboard(w.project.id, shortLived);
    const keeper = await dashboard(w.project.id, w.member.token);
    await new Promise((r) => setTimeout(r, 2100));
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    await runDurableObjectAlarm(room());
    expect(await s.closed).toEqual({ code: 4001, reason: "access token expired; reconnect with a fresh one" });
    // A dashboard with a valid token stays, and can renew it.
    keeper.send({ type: "auth", access_token: w.member.token });
    expect(await keeper.next((f) => f.type === "auth_ok")).toMatchObject({ expires_at: expect.any(String) });
  });

  it("keeps a renewed socket past the old token's expiry, in the room that renewed it and in one woken after eviction", async () => {
    const shortLived = await accessTokenUntil(w.member.id, Math.floor(Date.now() / 1000) + 2);
    const renewed = await dashboard(w.project.id, shortLived);
    const unrenewed = await dashboard(w.project.id, shortLived);
    renewed.send({ type: "auth", access_token: w.member.token });
    await renewed.next((f) => f.type === "auth_ok");
    await new Promise((r) => setTimeout(r, 2100));
    const id = await newTask(w);
    // The first frame after the expiry closes the unrenewed socket instead of reaching it; the renewed one gets it.
    expect(await unrenewed.closed).toEqual({ code: 4001, reason: "access token expired; reconnect with a fresh one" });
    expect(await renewed.next((f) => isEvent(f) && f.task_id === id)).toMatchObject({ event_type: "task_created" });
    await evictDurableObject(room());
    await note(id, 1);
    expect(await renewed.next((f) => isEvent(f) && f.event_type === "note_added" && f.task_id === id)).toMatchObject({ data: { content: "n1" } });
  });
});
