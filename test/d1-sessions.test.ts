/**
 * D1 read replication through the Sessions API: every answer carries the
 * bookmark of what its request read and wrote (X-D1-Bookmark), and a request
 * sending one back reads at least that. Local D1 has no replicas, so these
 * hold what can fail here: the bookmark is handed out, carried through the
 * room's writes, taken back, refused when malformed, and kept by the client.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_BOOKMARK_LENGTH, newerBookmark, sessionStartOf } from "../src/db/d1-bookmarks";
import { BASE, call, expectProblem, type Reply } from "./helpers";
import { conformingFetch } from "./api-conformance";
import { cli, createWorld, expectOk, T, taskIn, type World } from "./task-world";
import { hubClient, newerBookmark as clientNewer } from "../client";

const H = "X-D1-Bookmark";
/** D1's bookmarks: hexadecimal fields joined by hyphens (local D1 makes them of the same shape as production's). */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

const bookmarkOf = (reply: Reply) => {
  const bookmark = reply.headers.get(H);
  expect(bookmark, `${H} of ${reply.status} ${reply.text.slice(0, 200)}`).toMatch(BOOKMARK);
  return bookmark!;
};

let w: World;
beforeAll(async () => {
  w = await createWorld("D1 sessions");
});

const newTaskBody = (title: string) => ({ project_id: w.project.id, title, spec: "Read me back" });

describe("the bookmark an answer carries", () => {
  it("is on answers to reads, writes and refusals, and only moves forward", async () => {
    const read = await expectOk(call("/api/v1/projects", { token: w.admin }));
    const write = await expectOk(call("/api/v1/tasks", { token: w.admin, body: newTaskBody("bookmarked") }), 201);
    const refused = await call(`/api/v1/tasks/${crypto.randomUUID()}`, { token: w.admin });
    expectProblem(refused, 404, "NOT_FOUND");
    const [a, b, c] = [bookmarkOf(read), bookmarkOf(write), bookmarkOf(refused)];
    expect(b > a, `${b} after ${a}`).toBe(true);
    expect(c >= b, `${c} after ${b}`).toBe(true);
  });

  it("taken back, answers the request, which reads the write that gave it", async () => {
    const created = await expectOk(call("/api/v1/tasks", { token: w.admin, body: newTaskBody("read it back") }), 201);
    const bookmark = bookmarkOf(created);
    const read = await expectOk(call(`/api/v1/tasks/${created.json.id}`, { token: w.admin, headers: { [H]: bookmark } }));
    expect(read.json).toMatchObject({ id: created.json.id, title: "read it back" });
    // A session started from a bookmark never reports one older.
    expect(bookmarkOf(read) >= bookmark).toBe(true);
  });

  it("of a room's write is not older than the bookmark of the request before it, with no D1 read in the Worker", async () => {
    const { id } = await taskIn(w, "assigned");
    const before = bookmarkOf(await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}`)));
    // A warm agent write: the Worker does not read D1, so the bookmark is the room's commit.
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    expect(started.headers.get("Server-Timing")).toContain('worker;desc="d1 queries=0"');
    const after = bookmarkOf(started);
    expect(after > before, `${after} after ${before}`).toBe(true);
    // Given back with a stale bookmark, the answer still carries the room's newer one.
    const completed = await expectOk(call(`${T}/${id}/complete`, { apiKey: w.worker.apiKey, body: { result: "done" }, headers: { [H]: before } }));
    expect(bookmarkOf(completed) > after).toBe(true);
    const read = await expectOk(call(`${T}/${id}`, { apiKey: w.worker.apiKey, headers: { [H]: bookmarkOf(completed) } }));
    expect(read.json.status).toBe("done");
  });

  it("is not on a socket's upgrade answer", async () => {
    const res = await conformingFetch(
      new Request(`${BASE}/api/v1/projects/${w.project.id}/ws`, { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${w.admin}` } }),
    );
    expect(res.status).toBe(101);
    expect(res.headers.get(H)).toBeNull();
    res.webSocket!.accept();
    res.webSocket!.close();
  });
});

describe("a bookmark header the hub did not hand out", () => {
  const tasksNamed = async (title: string) =>
    (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE title = ?1").bind(title).first<{ n: number }>())!.n;

  for (const [what, value] of [
    ["malformed", "not a bookmark; DROP TABLE tasks"],
    ["hexadecimal without fields", "00000001"],
    ["over-long", `00000001-${"0".repeat(MAX_BOOKMARK_LENGTH)}`],
  ] as const) {
    it(`is refused when ${what}: 400 naming the header, nothing written`, async () => {
      const title = `refused ${crypto.randomUUID()}`;
      const reply = await call("/api/v1/tasks", { token: w.admin, body: newTaskBody(title), headers: { [H]: value } });
      expectProblem(reply, 400, "INVALID_BOOKMARK");
      expect(reply.json.detail).toContain(H);
      expect(reply.json.errors).toEqual([{ path: `header.${H}`, message: expect.any(String) }]);
      expect(await tasksNamed(title)).toBe(0);
      // Refused on agents' reads too.
      expectProblem(await call(T, { apiKey: w.worker.apiKey, headers: { [H]: value } }), 400, "INVALID_BOOKMARK");
    });
  }

  it("is taken when it names a session constraint instead, or is empty", async () => {
    for (const value of ["first-unconstrained", "first-primary", ""]) {
      const reply = await expectOk(call("/api/v1/projects", { token: w.admin, headers: { [H]: value } }));
      bookmarkOf(reply);
    }
  });
});

it("30 concurrent writer and reader pairs each read their own write with their own bookmark", async () => {
  const pairs = await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const title = `pair ${i} ${crypto.randomUUID()}`;
      const created = await call("/api/v1/tasks", { token: w.admin, body: newTaskBody(title) });
      expect(created.status, created.text).toBe(201);
      const read = await call(`/api/v1/tasks/${created.json.id}`, { token: w.admin, headers: { [H]: bookmarkOf(created) } });
      return { title, created, read };
    }),
  );
  for (const { title, created, read } of pairs) {
    expect(read.status, read.text).toBe(200);
    expect(read.json).toMatchObject({ id: created.json.id, title });
    expect(bookmarkOf(read) >= bookmarkOf(created)).toBe(true);
  }
});

describe("the typed client", () => {
  it("sends back the newest bookmark it was given, and none before it was given one", async () => {
    const sent: (string | null)[] = [];
    const received: (string | null)[] = [];
    const client = hubClient({
      baseUrl: BASE,
      token: w.admin,
      fetch: async (request: Request) => {
        sent.push(request.headers.get(H));
        const res = await conformingFetch(request);
        received.push(res.headers.get(H));
        return res;
      },
    });
    await client.GET("/api/v1/projects");
    const { data } = await client.POST("/api/v1/tasks", { body: newTaskBody("through the client") });
    await client.GET("/api/v1/tasks/{id}", { params: { path: { id: data!.id } } });
    expect(sent[0]).toBeNull();
    expect(received.every((b) => b !== null && BOOKMARK.test(b))).toBe(true);
    expect(sent.slice(1)).toEqual([received[0], received[1]]);
  });

  it("keeps the newer of two bookmarks, not the last", async () => {
    const [older, newer] = ["00000000-00000001-00000000-" + "0".repeat(32), "00000000-00000002-00000000-" + "0".repeat(32)];
    expect(clientNewer(null, older)).toBe(older);
    expect(clientNewer(newer, older)).toBe(newer);
    expect(clientNewer(older, newer)).toBe(newer);
    expect(clientNewer(newer, null)).toBe(newer);
  });
});

describe("the header's rules", () => {
  it("start a session at the primary without a bookmark, at the bookmark with one", () => {
    expect(sessionStartOf(undefined)).toEqual({ ok: true, start: "first-primary" });
    expect(sessionStartOf("")).toEqual({ ok: true, start: "first-primary" });
    const bookmark = "00000001-00000002-00004e2f-0a83ea2fceebc654de0640c422be4653";
    expect(sessionStartOf(bookmark)).toEqual({ ok: true, start: bookmark });
    expect(sessionStartOf("first-unconstrained")).toEqual({ ok: true, start: "first-unconstrained" });
    expect(sessionStartOf("first-anything").ok).toBe(false);
    expect(sessionStartOf("0000-zz").ok).toBe(false);
    expect(sessionStartOf(`0-${"a".repeat(MAX_BOOKMARK_LENGTH)}`)).toMatchObject({ ok: false, message: expect.stringContaining("characters long") });
  });

  it("order bookmarks as strings, missing ones last", () => {
    expect(newerBookmark("00000000-0000000a-00", "00000000-00000009-ff")).toBe("00000000-0000000a-00");
    expect(newerBookmark(null, "00000000-00000001-00")).toBe("00000000-00000001-00");
    expect(newerBookmark("00000000-00000001-00", undefined)).toBe("00000000-00000001-00");
    expect(newerBookmark(null, null)).toBeNull();
  });
});
