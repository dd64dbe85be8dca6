/**
 * `git_diff_stats`, which `orchestratia task complete` sends beside the result
 * (cli.py cmd_complete, git_analyzer.capture_diff_stats): kept on the task on
 * every completion surface and returned with it, its shape checked.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem, hubAs } from "./helpers";
import { cli, createWorld, expectOk, T, taskIn, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Diff stats");
});

/** What capture_diff_stats returns for a commit touching two text files and an image, keys in its order. */
const STATS = {
  files_changed: 3,
  insertions: 42,
  deletions: 7,
  files: [
    { path: "src/auth/login.py", insertions: 40, deletions: 5 },
    { path: "README.md", insertions: 2, deletions: 2 },
  ],
  head_commit: "a1b2c3d",
  base_commit: null,
  binary_files: ["docs/flow.png"],
};

const running = async () => (await taskIn(w, "running")).id;
/** The request cmd_complete makes: the result parsed as JSON when it is, and git_diff_stats when files changed. */
const complete = (id: string, body: Record<string, unknown>, path = `${T}/${id}/complete`) => cli(w.worker.apiKey, "POST", path, body);
const asPerson = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: w.member.token }))).json;

describe("a completion with git_diff_stats", () => {
  it("keeps what the CLI sends on the task, and returns it to the agent and to people", async () => {
    const id = await running();
    const done = await expectOk(complete(id, { result: "Login implemented", git_diff_stats: STATS }));
    expect(done.json).toMatchObject({ status: "done", git_diff_stats: STATS });
    expect((await asPerson(id)).git_diff_stats).toEqual(STATS);
    const listed = (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}`, { token: w.member.token }))).json.tasks;
    expect(listed.find((t: { id: string }) => t.id === id).git_diff_stats).toEqual(STATS);
    // Completing again with the same request is the same no-op as without stats.
    expect((await expectOk(complete(id, { result: "Login implemented", git_diff_stats: STATS }))).json.git_diff_stats).toEqual(STATS);
  });

  it("is taken on the daemon's surface and through the typed client alike", async () => {
    const id = await running();
    const daemon = await expectOk(complete(id, { result: { summary: "ran" }, git_diff_stats: STATS }, `/api/v1/servers/tasks/${id}/complete`));
    expect(daemon.json).toMatchObject({ status: "ok", task: { id, status: "done", git_diff_stats: STATS } });

    const other = await running();
    const typed = await hubAs({ apiKey: w.worker.apiKey }).POST("/api/v1/server/tasks/{id}/complete", {
      params: { path: { id: other } },
      body: { result: "typed", git_diff_stats: { files_changed: 1, insertions: 1, deletions: 0 } },
    });
    expect(typed.response.status).toBe(200);
    // Lists and commits left out are kept as none.
    expect(typed.data!.git_diff_stats).toEqual({
      files_changed: 1,
      insertions: 1,
      deletions: 0,
      files: [],
      binary_files: [],
      head_commit: null,
      base_commit: null,
    });
  });

  it("is null when the CLI sent none (no file changed, or not a git repository)", async () => {
    for (const body of [{ result: "nothing to commit" }, { result: "nothing", git_diff_stats: null }]) {
      const id = await running();
      expect((await expectOk(complete(id, body))).json.git_diff_stats).toBeNull();
      expect((await asPerson(id)).git_diff_stats).toBeNull();
    }
  });

  it("keeps the counts whole and the lists to their first 200 entries, and drops keys it does not know", async () => {
    const id = await running();
    const binary = Array.from({ length: 300 }, (_, i) => `assets/img-${i}.png`);
    const done = await expectOk(complete(id, { result: "assets", git_diff_stats: { ...STATS, files_changed: 302, binary_files: binary, secret: "x" } }));
    expect(done.json.git_diff_stats.files_changed).toBe(302);
    expect(done.json.git_diff_stats.binary_files).toEqual(binary.slice(0, 200));
    expect(done.json.git_diff_stats).not.toHaveProperty("secret");
  });

  it("refuses a wrong shape with 422 naming each field, and leaves the task running", async () => {
    const id = await running();
    const bad = await complete(id, {
      result: "done",
      git_diff_stats: { files_changed: "3", insertions: -1, deletions: 1.5, files: [{ path: 7, insertions: 1 }], binary_files: "a.png", head_commit: 12 },
    });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(
      ["files_changed", "insertions", "deletions", "files.0.path", "files.0.deletions", "binary_files", "head_commit"].map((p) => `git_diff_stats.${p}`).sort(),
    );
    const notObject = await complete(id, { result: "done", git_diff_stats: "lots" });
    expectProblem(notObject, 422, "VALIDATION_FAILED");
    expect(notObject.json.errors).toEqual([{ path: "git_diff_stats", message: "must be an object" }]);
    // A path longer than any file system allows.
    const longPath = await complete(id, { result: "done", git_diff_stats: { ...STATS, files: [{ path: "a/".repeat(2100), insertions: 1, deletions: 0 }] } });
    expect(longPath.json.errors).toEqual([{ path: "git_diff_stats.files.0.path", message: "must be at most 4096 characters" }]);
    expect(await asPerson(id)).toMatchObject({ status: "running", result: null, git_diff_stats: null });
  });

  it("cuts stats over 64 KiB of JSON from the end of their lists, binary files first, and completes the task", async () => {
    const id = await running();
    const files = Array.from({ length: 200 }, (_, i) => ({ path: `${"deep/".repeat(75)}file-${i}.ts`, insertions: 1, deletions: 1 }));
    const binary_files = Array.from({ length: 200 }, (_, i) => `${"a/".repeat(40)}image-${i}.png`);
    const done = await expectOk(complete(id, { result: "done", git_diff_stats: { ...STATS, files_changed: 400, files, binary_files } }));
    const kept = done.json.git_diff_stats;
    expect(kept).toMatchObject({ files_changed: 400, insertions: STATS.insertions, deletions: STATS.deletions, binary_files: [] });
    expect(new TextEncoder().encode(JSON.stringify(kept)).byteLength).toBeLessThanOrEqual(64 * 1024);
    // As many files as fit, in the order sent: one more would not have.
    expect(kept.files).toEqual(files.slice(0, kept.files.length));
    expect(new TextEncoder().encode(JSON.stringify({ ...kept, files: files.slice(0, kept.files.length + 1) })).byteLength).toBeGreaterThan(64 * 1024);
  });

  it("stays with a task an output envelope fails, until a person retries it", async () => {
    const id = await running();
    const envelope = { success: false, summary: "Tests still red", artifacts: [], notes: [], recommendation: "retry" };
    const failed = await expectOk(complete(id, { result: envelope, git_diff_stats: STATS }));
    expect(failed.json).toMatchObject({ status: "failed", git_diff_stats: STATS });
    const retried = await expectOk(call(`/api/v1/tasks/${id}/retry`, { token: w.member.token, body: {} }));
    expect(retried.json).toMatchObject({ status: "pending", git_diff_stats: null });
  });
});
