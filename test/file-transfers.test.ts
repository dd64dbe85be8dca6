/**
 * Files between people and a session's machine: people upload and ask for files, and a fake daemon speaking exactly
 * what hub.py's `pending_uploads_loop` and `pending_pulls_loop` send fetches, acks, posts back and reports failures.
 */
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { EmptyLists, emptyLists, POLL_MEMO_MS } from "../src/files/file-polls";
import { daemonFiles } from "./fake-daemon";
import { addMember, BASE, call, createProject, createUser, expectProblem, fetchUrl, registerAgent, type Reply } from "./helpers";
import { cli, createWorld, expectOk, openSession, type World } from "./task-world";

let w: World;
let daemon: ReturnType<typeof daemonFiles>;
/** A server serving only the world's project (its members may move files there), with one session. */
let scoped: { id: string; apiKey: string; name: string };
let scopedSession: string;
let viewer: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  w = await createWorld("Files");
  daemon = daemonFiles(w.worker.apiKey);
  scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
  scopedSession = await openSession(scoped.apiKey, w.project.id, "scoped");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
});

const sha256 = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
const bytesOf = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251);
const session = (sid = w.workerSession, projectId = w.project.id) => `/api/v1/projects/${projectId}/sessions/${sid}`;

async function replyOf(res: Response): Promise<Reply> {
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

/** A person's upload as the dashboard sends it: the raw bytes, the name in `X-Filename` (or `?filename=`). */
async function upload(bytes: Uint8Array, filename: string, opts: { token?: string; sid?: string; projectId?: string; via?: "header" | "query" } = {}) {
  const via = opts.via ?? "header";
  const query = via === "query" ? `?filename=${encodeURIComponent(filename)}` : "";
  const headers: Record<string, string> = { Authorization: `Bearer ${opts.token ?? w.admin}`, "Content-Length": String(bytes.byteLength) };
  if (via === "header") headers["X-Filename"] = filename;
  return replyOf(await fetchUrl(`${BASE}${session(opts.sid, opts.projectId)}/uploads${query}`, { method: "POST", body: bytes, headers }));
}

const askFor = (path: unknown, opts: { token?: string; sid?: string } = {}) =>
  call(`${session(opts.sid)}/downloads`, { token: opts.token ?? w.admin, body: { path } });

const events = async (type: string) =>
  ((await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events as any[]).filter(
    (e) => e.event_type === type || e.type === type,
  );

/** The project's stored objects in R2. */
const storedObjects = async () => (await env.BLOBS.list({ prefix: `projects/${w.project.id}/` })).objects.length;

/** Whatever is pending for the world's daemon is settled first, so each test sees only its own items. */
async function drained() {
  await daemon.deliverPending();
  for (const item of (await daemon.pendingPulls()).json) await daemon.failPull(item.download_id, "drained");
}

describe("a file sent to a session's machine", () => {
  it("is stored, listed for the session's daemon, fetched with its key, acked, and delivered with the path it landed at", async () => {
    await drained();
    const data = bytesOf(300_000);
    const digest = await sha256(data);
    const sent = await upload(data, "report 2026.pdf");
    expect(sent.status, sent.text).toBe(201);
    expect(sent.json).toMatchObject({ filename: "report 2026.pdf", size: data.byteLength, sha256: digest, status: "pending", session_id: w.workerSession });
    expect(sent.json.path).toBeUndefined();

    const pending = await daemon.pendingUploads();
    expect(pending.status).toBe(200);
    expect(pending.json).toEqual([
      { upload_id: sent.json.id, filename: "report 2026.pdf", download_url: expect.stringMatching(/^https:\/\/hub\.test\//), sha256: digest },
    ]);
    // Another server's daemon does not see it.
    expect((await daemonFiles(w.orchestrator.apiKey).pendingUploads()).json).toEqual([]);

    const fetched = await daemon.fetchUpload(pending.json[0].download_url);
    expect(fetched.status).toBe(200);
    expect(await sha256(new Uint8Array(await fetched.arrayBuffer()))).toBe(digest);
    // The URL is no use without the server's key.
    expect((await fetchUrl(pending.json[0].download_url)).status).toBe(401);

    const ack = await daemon.ack(sent.json.id, { success: true, path: "/tmp/orchestratia-uploads/report 2026.pdf" });
    expect(ack.status, ack.text).toBe(200);
    expect(ack.json).toEqual({ id: sent.json.id, status: "delivered" });
    expect((await daemon.pendingUploads()).json).toEqual([]);

    const one = await call(`${session()}/uploads/${sent.json.id}`, { token: w.admin });
    expect(one.json).toMatchObject({ status: "delivered", path: "/tmp/orchestratia-uploads/report 2026.pdf", sha256: digest });
    const list = await call(`${session()}/uploads`, { token: viewer.token });
    expect(list.status).toBe(200);
    expect(list.json.uploads[0]).toEqual(one.json);

    const [uploaded] = (await events("file_uploaded")).filter((e) => e.data.upload_id === sent.json.id);
    expect(uploaded).toMatchObject({
      actor: "admin@example.com",
      data: {
        session_id: w.workerSession,
        session_name: "worker",
        server_id: w.worker.id,
        server_name: w.worker.name,
        filename: "report 2026.pdf",
        size: data.byteLength,
        sha256: digest,
      },
    });
    const [delivered] = (await events("file_delivered")).filter((e) => e.data.upload_id === sent.json.id);
    expect(delivered).toMatchObject({
      actor: `agent:${w.worker.name}`,
      data: { path: "/tmp/orchestratia-uploads/report 2026.pdf", filename: "report 2026.pdf" },
    });
  });

  it("takes the name from ?filename= (any Unicode) and records a daemon's failure with its error", async () => {
    await drained();
    const sent = await upload(bytesOf(10), "résumé – 東京.txt", { via: "query" });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.json.filename).toBe("résumé – 東京.txt");
    const [item] = (await daemon.pendingUploads()).json;
    expect(item.filename).toBe("résumé – 東京.txt");
    const ack = await daemon.ack(sent.json.id, { success: false, error: "write failed: [Errno 28] No space left on device" });
    expect(ack.json.status).toBe("failed");
    expect((await call(`${session()}/uploads/${sent.json.id}`, { token: w.admin })).json).toMatchObject({
      status: "failed",
      error: "write failed: [Errno 28] No space left on device",
    });
    const [failed] = (await events("file_failed")).filter((e) => e.data.upload_id === sent.json.id);
    expect(failed.data).toMatchObject({ kind: "upload", filename: "résumé – 東京.txt", error: "write failed: [Errno 28] No space left on device" });
  });

  it("is acked once: a second ack is 409 and changes nothing", async () => {
    await drained();
    const sent = await upload(bytesOf(5), "once.txt");
    expect((await daemon.ack(sent.json.id, { success: true, path: "/tmp/orchestratia-uploads/once.txt" })).status).toBe(200);
    expectProblem(await daemon.ack(sent.json.id, { success: false, error: "again" }), 409, "FILE_TRANSFER_SETTLED");
    expect((await call(`${session()}/uploads/${sent.json.id}`, { token: w.admin })).json).toMatchObject({
      status: "delivered",
      path: "/tmp/orchestratia-uploads/once.txt",
    });
    expect((await events("file_failed")).filter((e) => e.data.upload_id === sent.json.id)).toEqual([]);
  });

  it("a success ack must say where the file landed", async () => {
    const sent = await upload(bytesOf(5), "where.txt");
    const reply = await daemon.ack(sent.json.id, { success: true });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual([{ path: "path", message: "is required when success is true" }]);
    await drained();
  });

  it("refuses a name with a separator, '..', a control character or over 255 bytes, naming filename, and stores nothing", async () => {
    const before = await storedObjects();
    const names = [
      "../etc/passwd",
      "a/b.txt",
      "a\\b.txt",
      "..",
      "a..b",
      "C:evil.txt",
      "a\nb.txt",
      "tab\there",
      "nul\u0000",
      "x".repeat(256),
      "é".repeat(128),
      "",
    ];
    for (const name of names) {
      const reply = await upload(bytesOf(3), name, { via: "query" });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(
        reply.json.errors.map((e: { path: string }) => e.path),
        name,
      ).toEqual(["filename"]);
    }
    // Exactly 255 bytes of UTF-8 is a name.
    const longest = await upload(bytesOf(3), `${"é".repeat(127)}x`, { via: "query" });
    expect(longest.status, longest.text).toBe(201);
    const missing = await replyOf(
      await fetchUrl(`${BASE}${session()}/uploads`, { method: "POST", body: bytesOf(3), headers: { Authorization: `Bearer ${w.admin}` } }),
    );
    expectProblem(missing, 422, "VALIDATION_FAILED");
    expect(missing.json.errors[0].path).toBe("filename");
    expect(await storedObjects()).toBe(before + 1);
    await drained();
  });

  it("refuses more than 100 MiB with 413 before reading or storing anything, and a body without Content-Length with 411", async () => {
    const before = await storedObjects();
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const big = await replyOf(
      await fetchUrl(`${BASE}${session()}/uploads`, {
        method: "POST",
        body: endless,
        headers: { Authorization: `Bearer ${w.admin}`, "X-Filename": "huge.iso", "Content-Length": String(100 * 1024 ** 2 + 1) },
      }),
    );
    expectProblem(big, 413, "PAYLOAD_TOO_LARGE");
    expect(pulled).toBeLessThanOrEqual(2);
    const chunked = await replyOf(
      await fetchUrl(`${BASE}${session()}/uploads`, {
        method: "POST",
        body: new ReadableStream({
          start(controller) {
            controller.enqueue(bytesOf(10));
            controller.close();
          },
        }),
        headers: { Authorization: `Bearer ${w.admin}`, "X-Filename": "streamed.bin" },
      }),
    );
    expectProblem(chunked, 411, "LENGTH_REQUIRED");
    expect(await storedObjects()).toBe(before);
    expect((await daemon.pendingUploads()).json).toEqual([]);
  });

  it("is for those who may type on the machine: viewers and members of a project the server does not only serve are refused", async () => {
    expectProblem(await upload(bytesOf(3), "v.txt", { token: viewer.token }), 403, "FORBIDDEN");
    // The world's worker serves every project: only an admin may put files there.
    expectProblem(await upload(bytesOf(3), "m.txt", { token: w.member.token }), 403, "NOT_ALLOWED");
    expectProblem(await askFor("/etc/hostname", { token: w.member.token }), 403, "NOT_ALLOWED");
    // On a server serving only this project, its members may.
    const ok = await upload(bytesOf(3), "m.txt", { token: w.member.token, sid: scopedSession });
    expect(ok.status, ok.text).toBe(201);
    expect((await daemonFiles(scoped.apiKey).pendingUploads()).json.map((i: { upload_id: string }) => i.upload_id)).toEqual([ok.json.id]);
    expect((await daemonFiles(scoped.apiKey).deliverPending())[0]!.acked).toBe(200);
  });

  it("is 404 for a session of another project, and for another server's uploads", async () => {
    const other = await createProject(w.admin, "Files elsewhere");
    const otherSession = await openSession(w.worker.apiKey, other.id, "elsewhere");
    expectProblem(await upload(bytesOf(3), "x.txt", { sid: otherSession }), 404, "NOT_FOUND");
    expectProblem(await askFor("/etc/hostname", { sid: otherSession }), 404, "NOT_FOUND");
    expectProblem(await call(`${session(otherSession)}/uploads`, { token: w.admin }), 404, "NOT_FOUND");

    const sent = await upload(bytesOf(3), "mine.txt");
    const [item] = (await daemon.pendingUploads()).json;
    const stranger = daemonFiles(w.orchestrator.apiKey);
    expect((await stranger.fetchUpload(item.download_url)).status).toBe(404);
    expectProblem(await stranger.ack(sent.json.id, { success: true, path: "/tmp/x" }), 404, "NOT_FOUND");
    expectProblem(await stranger.ack("not-a-uuid", { success: true, path: "/tmp/x" }), 404, "NOT_FOUND");
    // An upload's id is no download's.
    expectProblem(await daemon.failPull(sent.json.id, "no"), 404, "NOT_FOUND");
    expect((await call(`${session()}/uploads/${sent.json.id}`, { token: w.admin })).json.status).toBe("pending");
    await drained();
  });

  it("takes a few dozen uploads at once, each stored, listed and delivered once", async () => {
    await drained();
    const files = Array.from({ length: 36 }, (_, i) => ({ name: `part-${i}.bin`, data: bytesOf(1000 + i * 37, i) }));
    const sent = await Promise.all(files.map((f) => upload(f.data, f.name)));
    expect(sent.map((s) => s.status)).toEqual(files.map(() => 201));
    const delivered = await daemon.deliverPending();
    expect(delivered).toHaveLength(20);
    const rest = await daemon.deliverPending();
    expect([...delivered, ...rest].map((d) => d.acked)).toEqual(files.map(() => 200));
    const byId = new Map([...delivered, ...rest].map((d) => [d.upload_id, d.bytes]));
    for (const [i, s] of sent.entries()) expect(await sha256(byId.get(s.json.id)!)).toBe(await sha256(files[i]!.data));
    const listed = (await call(`${session()}/uploads`, { token: w.admin })).json.uploads as { id: string; status: string }[];
    expect(new Set(listed.filter((u) => sent.some((s) => s.json.id === u.id)).map((u) => u.status))).toEqual(new Set(["delivered"]));
    const seqs = (await events("file_uploaded")).filter((e) => sent.some((s) => s.json.id === e.data.upload_id)).map((e) => e.seq);
    expect(new Set(seqs).size).toBe(files.length);
  });
});

describe("a file fetched from a session's machine", () => {
  it("is asked of the session's daemon, posted back as multipart, and served by a signed URL with the same bytes", async () => {
    await drained();
    const asked = await askFor("~/project/dist/build.log");
    expect(asked.status, asked.text).toBe(201);
    expect(asked.json).toMatchObject({ path: "~/project/dist/build.log", status: "pending" });
    expect((await daemonFiles(w.orchestrator.apiKey).pendingPulls()).json).toEqual([]);
    const pending = await daemon.pendingPulls();
    expect(pending.json).toEqual([{ download_id: asked.json.id, path: "~/project/dist/build.log" }]);

    const data = bytesOf(2 * 1024 * 1024, 3);
    const sent = await daemon.sendPull(asked.json.id, "build.log", data);
    expect(sent.status, sent.text).toBe(200);
    expect((await daemon.pendingPulls()).json).toEqual([]);

    const ready = await call(`${session()}/downloads/${asked.json.id}`, { token: w.admin });
    expect(ready.json).toMatchObject({ status: "ready", filename: "build.log", size: data.byteLength, sha256: await sha256(data), url: expect.any(String) });
    const bytes = await fetchUrl(ready.json.url);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get("Content-Disposition")).toBe('attachment; filename="build.log"');
    expect(await sha256(new Uint8Array(await bytes.arrayBuffer()))).toBe(await sha256(data));

    // Viewers see that it is ready, not the link.
    const seen = await call(`${session()}/downloads/${asked.json.id}`, { token: viewer.token });
    expect(seen.json.status).toBe("ready");
    expect(seen.json.url).toBeUndefined();
    expect((await call(`${session()}/downloads`, { token: w.admin })).json.downloads[0]).toMatchObject({ id: asked.json.id, url: expect.any(String) });

    const [pulled] = (await events("file_pulled")).filter((e) => e.data.download_id === asked.json.id);
    expect(pulled).toMatchObject({ actor: `agent:${w.worker.name}`, data: { path: "~/project/dist/build.log", filename: "build.log", size: data.byteLength } });
    expectProblem(await daemon.failPull(asked.json.id, "late"), 409, "FILE_TRANSFER_SETTLED");
  });

  it("refuses an expired or tampered signed URL", async () => {
    await drained();
    const asked = await askFor("/etc/hostname");
    await daemon.sendPull(asked.json.id, "hostname", new TextEncoder().encode("box\n"));
    const { url } = (await call(`${session()}/downloads/${asked.json.id}`, { token: w.admin })).json;
    const id = new URL(url).pathname.split("/").at(-1)!;
    const token = new URL(url).searchParams.get("token")!;
    const expired = await new SignJWT({ m: "GET", s: 4 })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(id)
      .setAudience("orchestratia-dataref")
      .setIssuer(env.JWT_ISSUER)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 5)
      .sign(new TextEncoder().encode(env.JWT_SECRET));
    const base = url.split("?")[0];
    expect((await fetchUrl(`${base}?token=${expired}`)).status).toBe(401);
    const tampered = token.slice(0, -3) + (token.endsWith("AAA") ? "BBB" : "AAA");
    expect((await fetchUrl(`${base}?token=${tampered}`)).status).toBe(401);
    expect(await (await fetchUrl(url)).text()).toBe("box\n");
  });

  it("over 10 MiB is refused with 413, and the daemon's report of it marks the download failed", async () => {
    await drained();
    const asked = await askFor("/var/log/huge.log");
    const before = await storedObjects();
    const sent = await daemon.sendPull(asked.json.id, "huge.log", bytesOf(10 * 1024 * 1024 + 1));
    expect(sent.status).toBe(413);
    expect(JSON.parse(sent.text).code).toBe("PAYLOAD_TOO_LARGE");
    expect(await storedObjects()).toBe(before);
    // hub.py: `upload rejected: {status} {text[:200]}`.
    const failed = await daemon.failPull(asked.json.id, `upload rejected: 413 ${sent.text.slice(0, 200)}`);
    expect(failed.json).toEqual({ id: asked.json.id, status: "failed" });
    const got = await call(`${session()}/downloads/${asked.json.id}`, { token: w.admin });
    expect(got.json).toMatchObject({ status: "failed", error: expect.stringMatching(/^upload rejected: 413/) });
    expect(got.json.url).toBeUndefined();
    const [event] = (await events("file_failed")).filter((e) => e.data.download_id === asked.json.id);
    expect(event.data).toMatchObject({ kind: "download", path: "/var/log/huge.log", error: expect.stringMatching(/^upload rejected: 413/) });
  });

  it("the daemon's own refusal (a missing file) is shown as failed", async () => {
    await drained();
    const asked = await askFor("/nope");
    expect((await daemon.failPull(asked.json.id, "file not found: /nope")).status).toBe(200);
    expect((await call(`${session()}/downloads/${asked.json.id}`, { token: w.admin })).json).toMatchObject({
      status: "failed",
      error: "file not found: /nope",
    });
    expectProblem(
      await daemon
        .sendPull(asked.json.id, "nope", bytesOf(1))
        .then((r) => ({ ...r, headers: new Headers({ "Content-Type": "application/problem+json" }), json: JSON.parse(r.text) })),
      409,
      "FILE_TRANSFER_SETTLED",
    );
  });

  it("confines a member to the session's working directory, as its files are, and sends the daemon the path inside it", async () => {
    const scopedDaemon = daemonFiles(scoped.apiKey);
    const inFolder = (
      await expectOk(
        cli(scoped.apiKey, "POST", "/api/v1/server/sessions", {
          name: `app-${crypto.randomUUID().slice(0, 6)}`,
          project_id: w.project.id,
          working_directory: "/home/dev/app",
        }),
        201,
      )
    ).json.id;
    for (const item of (await scopedDaemon.pendingPulls()).json) await scopedDaemon.failPull(item.download_id, "drained");
    const asMember = (path: string, sid = inFolder) => askFor(path, { token: w.member.token, sid });
    for (const [path, rule] of [
      ["~/.ssh/id_rsa", /only an admin/],
      ["~root/.bashrc", /only an admin/],
      ["/etc/passwd", /only an admin/],
      ["\\server\\share\\x", /only an admin/],
      ["C:\\Windows\\win.ini", /only an admin/],
      ["../secret.txt", /`\.\.` leads out/],
      ["src/../../secret.txt", /`\.\.` leads out/],
      ["./", /not the folder itself/],
    ] as const) {
      const refused = await asMember(path);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors).toEqual([{ path: "path", message: expect.stringMatching(rule) }]);
    }
    const asked = await asMember("./dist/../build.log");
    expect(asked.status, asked.text).toBe(201);
    expect(asked.json).toMatchObject({ path: "/home/dev/app/build.log", status: "pending" });
    // hub.py's pending_pulls_loop reads `path` and opens it as given: only the confined one reached it.
    expect((await scopedDaemon.pendingPulls()).json).toEqual([{ download_id: asked.json.id, path: "/home/dev/app/build.log" }]);
    // A session whose folder the hub does not know: nothing to confine to.
    expectProblem(await asMember("build.log", scopedSession), 409, "NO_WORKING_DIRECTORY");
    // An admin names any path the daemon can read.
    const admins = await askFor("~/.ssh/id_rsa", { sid: inFolder });
    expect(admins.json).toMatchObject({ path: "~/.ssh/id_rsa", status: "pending" });
    for (const item of (await scopedDaemon.pendingPulls()).json) await scopedDaemon.failPull(item.download_id, "drained");
  });

  it("refuses a bad path, a post without a file, viewers and other servers", async () => {
    await drained();
    const empty = await askFor("  ");
    expectProblem(empty, 422, "VALIDATION_FAILED");
    expect(empty.json.errors[0].path).toBe("path");
    expectProblem(await askFor("a\u0000b"), 422, "VALIDATION_FAILED");
    expectProblem(await askFor("/etc/hostname", { token: viewer.token }), 403, "FORBIDDEN");
    const asked = await askFor("/etc/hostname");
    const stranger = daemonFiles(w.orchestrator.apiKey);
    expect((await stranger.sendPull(asked.json.id, "hostname", bytesOf(3))).status).toBe(404);
    expectProblem(await stranger.failPull(asked.json.id, "no"), 404, "NOT_FOUND");
    const noFile = await replyOf(
      await fetchUrl(`${BASE}/api/v1/server/files/pulls/${asked.json.id}/upload`, {
        method: "POST",
        body: new FormData(),
        headers: { "X-API-Key": w.worker.apiKey },
      }),
    );
    expectProblem(noFile, 422, "VALIDATION_FAILED");
    expect(noFile.json.errors[0].path).toBe("file");
    expect((await call(`${session()}/downloads/${asked.json.id}`, { token: w.admin })).json.status).toBe("pending");
    await drained();
  });
});

describe("the daemons' polls", () => {
  const timing = (reply: Reply) => {
    const header = reply.headers.get("Server-Timing") ?? "";
    return { queries: Number(/worker;desc="d1 queries=(\d+)"/.exec(header)![1]), rowsRead: Number(/worker-d1;desc="rows read=(\d+)/.exec(header)![1]) };
  };

  it("answer an empty list with one indexed read once the key is known, and the other list from what that read found", async () => {
    const fresh = await registerAgent(w.admin, `poller-${crypto.randomUUID().slice(0, 6)}`);
    const poller = daemonFiles(fresh.apiKey);
    // Any read with the key has the isolate remember it, as a daemon's heartbeat does.
    expect((await call("/api/v1/server/status", { apiKey: fresh.apiKey })).status).toBe(200);
    const uploads = await poller.pendingUploads();
    expect(uploads.json).toEqual([]);
    expect(timing(uploads).queries).toBe(1);
    expect(timing(uploads).rowsRead).toBeLessThanOrEqual(1);
    for (const poll of [poller.pendingPulls, poller.pendingUploads]) {
      const reply = await poll();
      expect(reply.json).toEqual([]);
      expect(timing(reply)).toEqual({ queries: 0, rowsRead: 0 });
    }
    const { results } = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT id FROM file_transfers WHERE server_id = ?1 AND kind = ?2 AND status = 'pending' ORDER BY created_at LIMIT 20",
    )
      .bind(fresh.id, "upload")
      .all<{ detail: string }>();
    expect(results.map((r) => r.detail)).toEqual([
      expect.stringMatching(/^SEARCH file_transfers USING INDEX file_transfers_waiting \(server_id=\? AND kind=\?\)/),
    ]);
  });

  it("list a transfer made through this isolate at the next poll, and one recorded elsewhere once what was read empty is 10 s old", async () => {
    await drained();
    await daemon.pendingUploads();
    expect((await daemon.pendingPulls()).json).toEqual([]);
    const asked = await askFor("/etc/os-release");
    expect((await daemon.pendingPulls()).json).toEqual([{ download_id: asked.json.id, path: "/etc/os-release" }]);
    await drained();
    expect((await daemon.pendingPulls()).json).toEqual([]);

    // Another isolate's write: straight into D1, which this isolate does not hear of.
    const id = crypto.randomUUID();
    const now = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO file_transfers (id, project_id, session_id, server_id, kind, status, path, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, 'download', 'pending', '/etc/issue', 'elsewhere', ?, ?)",
    )
      .bind(id, w.project.id, w.workerSession, w.worker.id, now, now)
      .run();
    expect((await daemon.pendingPulls()).json).toEqual([]);
    const clock = emptyLists.now;
    emptyLists.now = () => Date.now() + POLL_MEMO_MS;
    try {
      expect((await daemon.pendingPulls()).json).toEqual([{ download_id: id, path: "/etc/issue" }]);
    } finally {
      emptyLists.now = clock;
    }
    await drained();
  });

  it("keep no empty list from a read that began before a transfer was recorded, and forget the oldest servers first", () => {
    let t = 1_000;
    const lists = new EmptyLists(10_000, 2);
    lists.now = () => t;
    const readAt = t;
    t += 5;
    lists.forget("a");
    lists.record("a", readAt, { upload: true, download: true });
    expect(lists.isEmpty("a", "upload")).toBe(false);
    lists.record("a", t + 1, { upload: true, download: false });
    expect([lists.isEmpty("a", "upload"), lists.isEmpty("a", "download")]).toEqual([true, false]);
    lists.record("b", t, { upload: true, download: true });
    lists.record("c", t, { upload: true, download: true });
    expect(["a", "b", "c"].map((s) => lists.isEmpty(s, "upload"))).toEqual([false, true, true]);
    t += 10_000;
    expect(lists.isEmpty("c", "upload")).toBe(false);
  });

  it("are refused without a valid key", async () => {
    expectProblem(await call("/api/v1/server/files/pending"), 401, "UNAUTHORIZED");
    expectProblem(await call("/api/v1/server/files/pulls/pending", { apiKey: "orc_nope" }), 401, "INVALID_API_KEY");
  });
});
