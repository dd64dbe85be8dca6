/**
 * A session's files, relayed to its daemon: people list, read, write and stat
 * the session's working tree, and a fake daemon answers each `fs_*` frame the
 * way hub.py `_handle_fs_request` and fs_handler.py do, on a pretend machine.
 * Every refusal the hub makes itself is checked to reach no daemon.
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, until, type Reply } from "./helpers";
import { answerFiles, fakeDaemon, pythonDumps, type FakeDaemon } from "./fake-daemon";
import { FakeMachine, MAX_READ_BYTES } from "./fake-fs-handler";
import { createWorld, expectOk, openSession, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
let box: { id: string; apiKey: string; name: string };
let daemon: FakeDaemon;
let sessionId: string;
const machine = new FakeMachine()
  .file("/home/dev/app/README.md", "# App\n", 1_700_000_000)
  .file("/home/dev/app/src/main.py", "print('hi')\n", 1_700_000_100)
  .file("/home/dev/app/src/Zeta.txt", "z\n", 1_700_000_200)
  .dir("/home/dev/app/docs", 1_700_000_300)
  .symlink("/home/dev/app/etc-link", "/etc")
  .symlink("/home/dev/app/lib", "src")
  .file("/home/dev/app/logo.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]), 1_700_000_400)
  .file("/home/dev/app/old.txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]), 1_700_000_500)
  .file("/home/dev/app/big.log", "x".repeat(3 * 1000 * 1000), 1_700_000_600)
  .file("/home/dev/app/accents.txt", new Uint8Array(2 * 1000 * 1000).fill(0xe9), 1_700_000_650)
  .file("/home/dev/app/huge.bin", new Uint8Array(MAX_READ_BYTES + 1), 1_700_000_700)
  .file("/home/dev/app/slow.txt", "never answered", 1_700_000_800)
  .file("/home/dev/secret.txt", "outside the root")
  .file("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n", 1_600_000_000);

const sha = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex");
const F = (sid = sessionId, projectId = w.project.id) => `/api/v1/projects/${projectId}/sessions/${sid}/fs`;
const q = (params: Record<string, string>) => `?${new URLSearchParams(params)}`;
const list = (params: Record<string, string> = {}, token = w.member.token, sid = sessionId) => call(`${F(sid)}${q(params)}`, { token });
const read = (path: string, token = w.member.token, extra: Record<string, string> = {}) => call(`${F()}/file${q({ path, ...extra })}`, { token });
const write = (path: string, body: Record<string, unknown>, token = w.member.token) => call(`${F()}/file${q({ path })}`, { method: "PUT", token, body });
const stat = (path: string, token = w.member.token) => call(`${F()}/stat${q({ path })}`, { token });
const fsFrames = () => daemon.socket.frames.filter((f) => String(f.type).startsWith("fs_"));
/** The refusal, and that the daemon was asked nothing for it. */
async function refusedHere(reply: Promise<Reply>, status: number, code: string, path?: string) {
  const before = fsFrames().length;
  const r = await reply;
  expectProblem(r, status, code);
  if (path) expect(r.json.errors.map((e: any) => e.path)).toEqual([path]);
  expect(fsFrames().length).toBe(before);
  return r;
}

beforeAll(async () => {
  w = await createWorld("Session files");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  // Serving the world's project only: its members may type in its sessions, and so edit their files.
  box = await registerAgent(w.admin, `box-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
  daemon = await fakeDaemon(box.apiKey);
  answerFiles(daemon, machine, { silent: (path) => path === "slow.txt" || path === "odd.txt" });
  const started = await expectOk(
    call(`/api/v1/projects/${w.project.id}/sessions`, { token: w.member.token, body: { server_id: box.id, working_directory: "/home/dev/app" } }),
    201,
  );
  sessionId = started.json.id;
  await until(
    async () => (await call(`/api/v1/projects/${w.project.id}/sessions/${sessionId}`, { token: w.member.token })).json.status,
    (s) => s === "running",
    "the session to run",
  );
});

describe("reading a session's files", () => {
  it("lists a folder of the working directory, folders first, as the daemon answers it; viewers list too", async () => {
    const root = await expectOk(list({}, viewer.token));
    expect(root.json).toEqual({
      path: "",
      entries: [
        { name: "docs", type: "dir", size: 4096, mtime: 1_700_000_300 },
        { name: "src", type: "dir", size: 4096, mtime: expect.any(Number) },
        { name: "accents.txt", type: "file", size: 2_000_000, mtime: 1_700_000_650 },
        { name: "big.log", type: "file", size: 3_000_000, mtime: 1_700_000_600 },
        { name: "etc-link", type: "symlink", size: 4, mtime: expect.any(Number) },
        { name: "huge.bin", type: "file", size: MAX_READ_BYTES + 1, mtime: 1_700_000_700 },
        { name: "lib", type: "symlink", size: 3, mtime: expect.any(Number) },
        { name: "logo.png", type: "file", size: 8, mtime: 1_700_000_400 },
        { name: "old.txt", type: "file", size: 5, mtime: 1_700_000_500 },
        { name: "README.md", type: "file", size: 6, mtime: 1_700_000_000 },
        { name: "slow.txt", type: "file", size: 14, mtime: 1_700_000_800 },
      ],
      truncated: false,
    });
    // What hub.py reads: the request id it answers with, the session, the path and the hub's working directory.
    expect(fsFrames().at(-1)).toEqual({ type: "fs_list_dir", request_id: expect.any(String), session_id: sessionId, path: "", working_dir: "/home/dev/app" });
    // A symlink that stays inside the root is followed; `.` and `..` inside the root are resolved before the daemon sees them.
    const lib = await expectOk(list({ path: "lib" }));
    expect(lib.json.entries.map((e: any) => e.name)).toEqual(["main.py", "Zeta.txt"]);
    expect((await expectOk(list({ path: "docs/../src/./" }))).json).toMatchObject({ path: "src", entries: lib.json.entries });
    expect(fsFrames().at(-1)).toMatchObject({ path: "src" });
  });

  it("reads a file's text with its sha256 and time; binary files have no content; non-UTF-8 text is Latin-1", async () => {
    expect((await expectOk(read("README.md", viewer.token))).json).toEqual({
      path: "README.md",
      content: "# App\n",
      binary: false,
      encoding: "utf-8",
      size: 6,
      mtime: 1_700_000_000,
      sha256: sha("# App\n"),
    });
    expect(fsFrames().at(-1)).toEqual({
      type: "fs_read_file",
      request_id: expect.any(String),
      session_id: sessionId,
      path: "README.md",
      working_dir: "/home/dev/app",
    });
    expect((await expectOk(read("/src/main.py"))).json).toMatchObject({ path: "src/main.py", content: "print('hi')\n" });
    expect((await expectOk(read("logo.png"))).json).toEqual({
      path: "logo.png",
      content: null,
      binary: true,
      encoding: "binary",
      size: 8,
      mtime: 1_700_000_400,
      sha256: sha(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2])),
    });
    expect((await expectOk(read("old.txt"))).json).toMatchObject({ content: "café\n", encoding: "latin-1", size: 5 });
  });

  it("describes a path: a file with its sha256, a folder, nothing", async () => {
    expect((await expectOk(stat("src/main.py", viewer.token))).json).toEqual({
      path: "src/main.py",
      exists: true,
      type: "file",
      size: 12,
      mtime: 1_700_000_100,
      sha256: sha("print('hi')\n"),
    });
    expect((await expectOk(stat("docs"))).json).toEqual({ path: "docs", exists: true, type: "dir", size: 4096, mtime: 1_700_000_300 });
    expect((await expectOk(stat("nothing/here"))).json).toEqual({ path: "nothing/here", exists: false });
    expect((await expectOk(stat("huge.bin"))).json).not.toHaveProperty("sha256");
  });

  it("answers the daemon's refusals as problems: not found, a folder read, a file listed", async () => {
    expectProblem(await read("missing.txt"), 404, "NOT_FOUND");
    expectProblem(await list({ path: "missing" }), 404, "NOT_FOUND");
    const folder = await read("src");
    expectProblem(folder, 422, "VALIDATION_FAILED");
    expect(folder.json.errors).toEqual([{ path: "query.path", message: "names a folder, not a file" }]);
    const file = await list({ path: "README.md" });
    expectProblem(file, 422, "VALIDATION_FAILED");
    expect(file.json.errors).toEqual([{ path: "query.path", message: "names a file, not a folder" }]);
  });

  it("refuses a file over the daemon's own limit, naming it", async () => {
    const huge = await read("huge.bin");
    expectProblem(huge, 413, "FILE_TOO_LARGE");
    expect(huge.json).toMatchObject({ limit: MAX_READ_BYTES, size: MAX_READ_BYTES + 1 });
    expect(huge.json.detail).toContain(`${MAX_READ_BYTES} bytes`);
  });

  it("reads files of several MB, which the daemon sends in one frame larger than the link takes", async () => {
    const big = await expectOk(read("big.log"));
    expect(big.json).toMatchObject({ path: "big.log", binary: false, encoding: "utf-8", size: 3_000_000, sha256: sha("x".repeat(3_000_000)) });
    expect(big.json.content).toBe("x".repeat(3_000_000));
    // Latin-1 text: json.dumps writes each byte as \u00e9, six bytes, so its frame is some 12 MB.
    const accents = await expectOk(read("accents.txt"));
    expect(accents.json).toMatchObject({ encoding: "latin-1", size: 2_000_000, sha256: sha(new Uint8Array(2_000_000).fill(0xe9)) });
    expect(accents.json.content).toBe("é".repeat(2_000_000));
    // The daemon stays connected and answers the next request.
    expect((await expectOk(read("README.md"))).json.content).toBe("# App\n");
  }, 20_000);
});

describe("paths and roots", () => {
  it("refuses a `..` that climbs out of the root before anything reaches the daemon", async () => {
    for (const path of ["../secret.txt", "src/../../secret.txt", "..", "/../etc/passwd"]) {
      await refusedHere(read(path), 422, "VALIDATION_FAILED", "query.path");
      await refusedHere(list({ path }), 422, "VALIDATION_FAILED", "query.path");
    }
    await refusedHere(write("../secret.txt", { content: "x" }), 422, "VALIDATION_FAILED", "query.path");
    expect(machine.text("/home/dev/secret.txt")).toBe("outside the root");
  });

  it("answers 403 PATH_DENIED for a symlink leading out of the root, as the daemon refuses it", async () => {
    const before = fsFrames().length;
    expectProblem(await read("etc-link/passwd"), 403, "PATH_DENIED");
    expectProblem(await list({ path: "etc-link" }), 403, "PATH_DENIED");
    expectProblem(await write("etc-link/passwd", { content: "owned" }), 403, "PATH_DENIED");
    // These did reach the daemon, which resolved the link and refused.
    expect(fsFrames().length).toBe(before + 3);
    expect(machine.text("/etc/passwd")).toBe("root:x:0:0:root:/root:/bin/bash\n");
  });

  it("lets only an admin name another root, an absolute folder", async () => {
    await refusedHere(list({ root: "/etc" }), 403, "NOT_ALLOWED");
    await refusedHere(list({ root: "/etc" }, viewer.token), 403, "NOT_ALLOWED");
    await refusedHere(list({ root: "etc" }, w.admin), 422, "VALIDATION_FAILED", "query.root");
    const etc = await expectOk(list({ root: "/etc" }, w.admin));
    expect(etc.json.entries).toEqual([{ name: "passwd", type: "file", size: 32, mtime: 1_600_000_000 }]);
    expect(fsFrames().at(-1)).toEqual({
      type: "fs_list_dir",
      request_id: expect.any(String),
      session_id: sessionId,
      path: "",
      working_dir: "/home/dev/app",
      root: "/etc",
    });
  });
});

describe("writing a session's files", () => {
  it("writes with the sha256 it read, and refuses a stale one with 409 and the file's current sha256 and time", async () => {
    const before = (await expectOk(read("src/main.py"))).json;
    const written = await expectOk(write("src/main.py", { content: "print('hello')\n", expected_sha256: before.sha256 }));
    expect(written.json).toEqual({ path: "src/main.py", sha256: sha("print('hello')\n"), mtime: expect.any(Number), size: 15 });
    expect(machine.text("/home/dev/app/src/main.py")).toBe("print('hello')\n");
    expect(fsFrames().at(-1)).toEqual({
      type: "fs_write_file",
      request_id: expect.any(String),
      session_id: sessionId,
      path: "src/main.py",
      working_dir: "/home/dev/app",
      content: "print('hello')\n",
      expected_sha256: before.sha256,
    });
    // Someone else saved meanwhile: the old sha256 no longer matches, nothing is written.
    const stale = await write("src/main.py", { content: "print('mine')\n", expected_sha256: before.sha256 });
    expectProblem(stale, 409, "FILE_CHANGED");
    expect(stale.json).toMatchObject({ current_sha256: sha("print('hello')\n"), current_mtime: written.json.mtime });
    expect(machine.text("/home/dev/app/src/main.py")).toBe("print('hello')\n");
    // Without a sha256 it overwrites whatever is there.
    await expectOk(write("src/main.py", { content: "print('mine')\n" }));
    expect(machine.text("/home/dev/app/src/main.py")).toBe("print('mine')\n");
  });

  it("creates a file in an existing folder, not in a missing one; a file expected but deleted is a conflict", async () => {
    expect((await expectOk(write("docs/notes.md", { content: "notes" }))).json).toMatchObject({ path: "docs/notes.md", size: 5, sha256: sha("notes") });
    const missing = await write("nowhere/notes.md", { content: "notes" });
    expectProblem(missing, 422, "VALIDATION_FAILED");
    expect(missing.json.errors.map((e: any) => e.path)).toEqual(["query.path"]);
    const gone = await write("deleted.md", { content: "x", expected_sha256: sha("old") });
    expectProblem(gone, 409, "FILE_CHANGED");
    expect(gone.json).toMatchObject({ current_sha256: null, current_mtime: null });
    expect(machine.nodes.has("/home/dev/app/deleted.md")).toBe(false);
  });

  it("answers 502 naming the field when the daemon's conflict carries a current_sha256 that is not a sha256", async () => {
    // A daemon answering this one path by hand, as hub.py envelopes fs_handler's answer.
    const answer = (fields: Record<string, unknown>) =>
      daemon.socket
        .next((f) => f.type === "fs_write_file" && f.path === "odd.txt")
        .then((f) => daemon.socket.send(pythonDumps({ type: "fs_write_file_result", request_id: f.request_id, ok: false, error: "conflict", ...fields })));
    for (const [fields, field] of [
      [{ current_sha256: { sha256: "abc" }, current_mtime: 1_700_000_000 }, "current_sha256"],
      [{ current_sha256: "not-hex", current_mtime: 1_700_000_000 }, "current_sha256"],
      [{ current_sha256: sha("x"), current_mtime: "yesterday" }, "current_mtime"],
    ] as const) {
      const answered = answer(fields);
      const odd = await write("odd.txt", { content: "x", expected_sha256: sha("old") });
      await answered;
      expectProblem(odd, 502, "DAEMON_ERROR");
      expect(odd.json.errors).toEqual([{ path: field, message: expect.stringMatching(/^must be /) }]);
      expect(odd.json.detail).not.toContain("[object Object]");
      expect(odd.json).not.toHaveProperty("current_sha256");
    }
    // A well-formed one is the usual conflict.
    const answered = answer({ current_sha256: sha("theirs"), current_mtime: 1_700_000_900 });
    const fine = await write("odd.txt", { content: "x", expected_sha256: sha("old") });
    await answered;
    expectProblem(fine, 409, "FILE_CHANGED");
    expect(fine.json).toMatchObject({ current_sha256: sha("theirs"), current_mtime: 1_700_000_900 });
  });

  it("is refused to viewers and to members who may not type in the terminal, with nothing reaching the daemon", async () => {
    await refusedHere(write("README.md", { content: "viewer was here" }, viewer.token), 403, "FORBIDDEN");
    // A server that also serves a project the member is not in: its daemon's user works for that project too.
    const other = await createProject(w.admin, "Elsewhere");
    const shared = await registerAgent(w.admin, `shared-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id, other.id] });
    const sharedSession = await openSession(shared.apiKey, w.project.id, "shared");
    const before = fsFrames().length;
    const refused = await call(`${F(sharedSession)}/file${q({ path: "README.md" })}`, { method: "PUT", token: w.member.token, body: { content: "x" } });
    expectProblem(refused, 403, "NOT_ALLOWED");
    expect(fsFrames().length).toBe(before);
    expect(machine.text("/home/dev/app/README.md")).toBe("# App\n");
  });

  it("refuses bad bodies and content larger than a frame of the daemon's socket, naming the field or the limit", async () => {
    const badSha = await refusedHere(write("README.md", { content: "x", expected_sha256: "abc" }), 422, "VALIDATION_FAILED", "expected_sha256");
    expect(badSha.json.errors[0].message).toBe("must be 64 lowercase hexadecimal digits");
    await refusedHere(write("README.md", { expected_sha256: null }), 422, "VALIDATION_FAILED", "content");
    await refusedHere(write("", { content: "x" }), 422, "VALIDATION_FAILED", "query.path");
    const big = await refusedHere(write("README.md", { content: "y".repeat(1024 * 1024) }), 413, "FILE_TOO_LARGE");
    expect(big.json.limit).toBe(1024 * 1024);
    expect(machine.text("/home/dev/app/README.md")).toBe("# App\n");
  });
});

describe("sessions and daemons", () => {
  it("answers 404 for a session of another project, and for a project the person cannot see", async () => {
    const other = await createProject(w.admin, "Another");
    const otherBox = await registerAgent(w.admin, `other-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [other.id] });
    const otherSession = await openSession(otherBox.apiKey, other.id, "theirs");
    await refusedHere(list({}, w.admin, otherSession), 404, "NOT_FOUND");
    await refusedHere(call(`${F(sessionId, other.id)}`, { token: w.member.token }), 404, "NOT_FOUND");
    await refusedHere(
      call(`${F(otherSession, other.id)}/file${q({ path: "README.md" })}`, { method: "PUT", token: w.member.token, body: { content: "x" } }),
      404,
      "NOT_FOUND",
    );
  });

  it("answers 409 DAEMON_OFFLINE when the session's daemon is not connected, and SESSION_ENDED for a session its daemon does not run or that ended", async () => {
    const away = await registerAgent(w.admin, `away-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    const awaySession = await openSession(away.apiKey, w.project.id, "away");
    expectProblem(await list({}, w.member.token, awaySession), 409, "DAEMON_OFFLINE");
    // Opened by the agent itself, not started by this daemon: hub.py answers `session_not_found`.
    const unknown = await openSession(box.apiKey, w.project.id, "by-hand");
    expectProblem(await list({}, w.member.token, unknown), 409, "SESSION_ENDED");
    await expectOk(call(`/api/v1/projects/${w.project.id}/sessions/${unknown}`, { method: "DELETE", token: w.member.token }));
    await refusedHere(list({}, w.member.token, unknown), 409, "SESSION_ENDED");
  });

  it("answers 504 DAEMON_TIMEOUT when the daemon does not answer within 15 s", async () => {
    const started = Date.now();
    const slow = await read("slow.txt");
    expectProblem(slow, 504, "DAEMON_TIMEOUT");
    expect(slow.json.detail).toContain("15 s");
    expect(Date.now() - started).toBeGreaterThanOrEqual(14_900);
  }, 25_000);
});
