/**
 * The code-review loop with an agent reviewer (API.md "Code review"): a completion with a diff opens a review, a
 * review task goes to the server tagged `code-review`, a failing review is pushed to the worker's session as
 * `code_review_fix_request`, the worker's next completion is the next attempt, and `orchestratia code review` reads
 * the latest.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { wakeRoomsWithStrandedReviews } from "../src/cron/maintenance";
import { call, daemonRegistration, registrationToken, until } from "./helpers";
import { cli, createWorld, expectOk, openSession, T, type World } from "./task-world";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";

const REVIEWS = "/api/v1/server/architecture/reviews";

/** What `orchestratia task complete` sends: its result and the diff stats capture_diff_stats measured. */
const diff = (head: string, files = ["src/auth.ts"]) => ({
  files_changed: files.length,
  insertions: 40,
  deletions: 3,
  files: files.map((path) => ({ path, insertions: 40 / files.length, deletions: 3 / files.length })),
  head_commit: head,
  base_commit: null,
  binary_files: [],
});

const review = (score: number, findings: unknown[] = []) => ({
  $schema: "orchestratia/task-result/v1",
  summary: `reviewed: ${score}`,
  contracts: { review: { status: "fulfilled", data: { score, status: score >= 80 ? "pass" : "fail", summary: `score ${score}`, findings } } },
});

const aFinding = { severity: "error", title: "Token never expires", detail: "exp is not set on the JWT", path: "src/auth.ts", line: 12 };

let w: World;
let reviewer: { id: string; apiKey: string };
let daemon: FakeDaemon;

async function registerReviewer(admin: string, tag = "code-review") {
  const reply = await call("/api/v1/servers/register", {
    body: {
      ...daemonRegistration(`reviewer-${crypto.randomUUID().slice(0, 6)}`, await registrationToken(admin)),
      capabilities: { tags: [tag], max_concurrent_tasks: 5 },
    },
  });
  expect(reply.status, reply.text).toBe(201);
  return { id: reply.json.id as string, apiKey: reply.json.api_key as string };
}

const setPolicy = (body: Record<string, unknown>) => call(`/api/v1/projects/${w.project.id}/review-policy`, { method: "PUT", token: w.admin, body });

/** A task given to the worker's session and started, as its agent would. */
async function workingTask(title: string) {
  const created = await expectOk(
    cli(w.orchestrator.apiKey, "POST", T, { title, spec: "Add JWT auth", project_id: w.project.id, target_repo: "api-gateway" }),
    201,
  );
  const id = created.json.id as string;
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

const reviewTaskOf = async (taskId: string, attempt: number) =>
  until(
    async () => (await call(`/api/v1/tasks/${taskId}/reviews`, { token: w.admin })).json.reviews?.[attempt - 1],
    (r) => typeof r?.review_task_id === "string",
    `the review task of attempt ${attempt}`,
  );

beforeAll(async () => {
  w = await createWorld("Code review");
  reviewer = await registerReviewer(w.admin);
  daemon = await fakeDaemon(w.worker.apiKey);
  await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, max_retries: 1 }));
});

describe("the agent reviewer's loop", () => {
  it("reviews a completion, sends a failing review back to the worker's session, and passes its next attempt", async () => {
    const id = await workingTask("Auth middleware");
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${REVIEWS}/${id}`))).json).toEqual({ status: "no_review" });

    const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Added JWT auth", git_diff_stats: diff("a1b2c3d") }));
    expect(done.json).toMatchObject({ status: "done", review: { status: "reviewing", attempt: 1 } });

    // The review task: linked to the reviewed one, needing the tag and the repository, given to the reviewer's server.
    const first = await reviewTaskOf(id, 1);
    const reviewTask = await until(
      async () => (await call(`/api/v1/tasks/${first.review_task_id}`, { token: w.admin })).json,
      (t) => t.assigned_server_id === reviewer.id,
      "the review task given to the reviewer",
    );
    expect(reviewTask).toMatchObject({
      type: "code_review",
      review_of: id,
      requirements: { capabilities: ["code-review"], repo: "api-gateway" },
      rejected_by: [w.worker.id],
      dependencies: [{ depends_on_task_id: id, dependency_type: "related" }],
    });
    expect(reviewTask.spec).toContain("a1b2c3d~1..a1b2c3d");
    expect(reviewTask.spec).toContain(`orchestratia task complete <this task's id> --result '{"$schema": "orchestratia/task-result/v1"`);
    // While its reviewer works, the CLI has no score to print yet.
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${REVIEWS}/${id}`))).json).toEqual({ status: "no_review" });

    // A review task's completion must carry a valid review.
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${reviewTask.id}/start`));
    const bad = await cli(reviewer.apiKey, "POST", `${T}/${reviewTask.id}/complete`, { result: review(140) });
    expect(bad.status, bad.text).toBe(422);
    expect(bad.json.errors[0]).toMatchObject({ path: "result.contracts.review.data.score" });

    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${reviewTask.id}/complete`, { result: review(45, [aFinding]) }));
    const fix = await until(
      () => daemon.shown(w.workerSession).flatMap((s) => (s.via === "typed" && s.taskId === id && s.text.startsWith("Code review") ? [s.text] : [])),
      (s) => s.length > 0,
      "the fix request typed into the worker's session",
    );
    expect(fix[0]).toContain("score 45/100");
    expect(fix[0]).toContain("[error] Token never expires (src/auth.ts:12): exp is not set on the JWT");
    // The official CLI refuses `task complete <id> <result>`: the result goes in --result.
    expect(fix[0]).toContain(`orchestratia task complete ${id} --result "`);
    expect(fix[0]).not.toContain("\n");
    const frame = daemon.socket.frames.find((f) => f.type === "code_review_fix_request");
    expect(frame).toMatchObject({ session_id: w.workerSession, task_id: id, attempt: 1, max_retries: 1, score: 45 });

    const latest = (await expectOk(cli(w.worker.apiKey, "GET", `${REVIEWS}/${id}`))).json;
    expect(latest).toMatchObject({ status: "fail", score: 45, attempt_number: 1, findings: [aFinding], git_diff_stats: { head_commit: "a1b2c3d" } });
    expect((await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.review).toEqual({ status: "changes_requested", attempt: 1 });

    // The worker's next completion is attempt 2, not a second completion refused.
    const again = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Set exp on the JWT", git_diff_stats: diff("d4e5f6a") }));
    expect(again.json).toMatchObject({ status: "done", review: { status: "reviewing", attempt: 2 } });
    const second = await reviewTaskOf(id, 2);
    const secondSpec = (await call(`/api/v1/tasks/${second.review_task_id}`, { token: w.admin })).json.spec as string;
    expect(secondSpec).toContain("The whole change so far: `git diff a1b2c3d~1..d4e5f6a`");
    expect(secondSpec).toContain("What changed since the last review: `git diff a1b2c3d..d4e5f6a`");
    await until(
      async () => (await call(`/api/v1/tasks/${second.review_task_id}`, { token: w.admin })).json.assigned_server_id,
      (s) => s === reviewer.id,
      "the second review task given",
    );
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${second.review_task_id}/start`));
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${second.review_task_id}/complete`, { result: review(92) }));

    const passed = await until(
      async () => (await expectOk(cli(w.worker.apiKey, "GET", `${REVIEWS}/${id}`))).json,
      (r) => r.status === "pass",
      "the passing review",
    );
    expect(passed).toMatchObject({ score: 92, attempt_number: 2, git_diff_stats: { head_commit: "d4e5f6a" } });
    expect((await call(`/api/v1/tasks/${id}`, { token: w.admin })).json).toMatchObject({
      status: "done",
      result: { summary: "Set exp on the JWT" },
      review: { status: "passed" },
    });
    const events = (await call(`/api/v1/projects/${w.project.id}/events?task_id=${id}`, { token: w.admin })).json.events as { type: string }[];
    expect(events.map((e) => e.type).filter((t) => t.startsWith("review_"))).toEqual([
      "review_requested",
      "review_failed",
      "review_requested",
      "review_passed",
    ]);

    // Passed: a completion now is a second completion again.
    const late = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Something else", git_diff_stats: diff("ffff000") });
    expect(late.status, late.text).toBe(409);
  });

  it("applies the final action when the last attempt fails", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, max_retries: 0, on_final_failure: "needs_human" }));
    const id = await workingTask("Rate limiter");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Added a limiter", git_diff_stats: diff("1111111") }));
    const first = await reviewTaskOf(id, 1);
    await until(
      async () => (await call(`/api/v1/tasks/${first.review_task_id}`, { token: w.admin })).json.status,
      (s) => s === "assigned",
      "the review task given",
    );
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${first.review_task_id}/start`));
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${first.review_task_id}/complete`, { result: review(20, [aFinding]) }));
    const task = await until(
      async () => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json,
      (t) => t.status === "needs_human",
      "the task sent to a person",
    );
    expect(task.review).toEqual({ status: "failed", attempt: 1 });
    const events = (await call(`/api/v1/projects/${w.project.id}/events?task_id=${id}`, { token: w.admin })).json.events as { type: string; data: any }[];
    expect(events.find((e) => e.type === "review_exhausted")?.data).toMatchObject({ attempt: 1, action: "needs_human", score: 20 });
    expect(events.find((e) => e.type === "intervention_requested")?.data.question).toContain("The code review failed on its last attempt");
    // No fix request: there are no attempts left.
    expect(daemon.socket.frames.filter((f) => f.type === "code_review_fix_request" && f.task_id === id)).toEqual([]);
  });

  it("does not review a completion without a change, nor one the policy does not match", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, match: { paths: ["src/*"], min_lines: 10 } }));
    const plain = await workingTask("No diff");
    expect((await expectOk(cli(w.worker.apiKey, "POST", `${T}/${plain}/complete`, { result: "Nothing committed" }))).json.review).toBeNull();
    const docs = await workingTask("Docs only");
    expect(
      (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${docs}/complete`, { result: "Docs", git_diff_stats: diff("2222222", ["README.md"]) }))).json.review,
    ).toBeNull();
  });

  it("opens one review per attempt when completions race", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, max_retries: 2 }));
    const id = await workingTask("Raced");
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `take ${i % 3}`, git_diff_stats: diff(`c0ffee${i % 3}`) }),
      ),
    );
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    const reviews = (await call(`/api/v1/tasks/${id}/reviews`, { token: w.admin })).json.reviews as { attempt_number: number; status: string }[];
    // Each accepted completion is one attempt: numbered 1, 2, … with no gap and no repeat; only the last is still pending.
    expect(reviews.map((r) => r.attempt_number)).toEqual(reviews.map((_, i) => i + 1));
    expect(reviews.filter((r) => r.status === "pending")).toHaveLength(1);
    expect(reviews.slice(0, -1).every((r) => r.status === "superseded")).toBe(true);
    // The superseded attempts' review tasks are cancelled: one review task is left open.
    await until(
      async () =>
        (await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE review_of = ?1 AND status NOT IN ('done', 'failed', 'cancelled')")
          .bind(id)
          .first<{ n: number }>())!.n,
      (n) => n === 1,
      "one open review task",
    );
    const task = (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json;
    expect(task.review).toEqual({ status: "reviewing", attempt: reviews.length });
  });
});

describe("a worker cannot get around its review", () => {
  it("by taking, cancelling or changing its review task, and no one else completes the task again", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, max_retries: 2 }));
    const id = await workingTask("Guarded");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Done", git_diff_stats: diff("8888888") }));
    const { review_task_id } = await reviewTaskOf(id, 1);
    const own = await cli(w.worker.apiKey, "POST", `${T}/${review_task_id}/assign`, { server_name: w.worker.name });
    expect([own.status, own.json.detail]).toEqual([403, "A review task is never given to the server whose change it reviews"]);
    expect((await cli(w.worker.apiKey, "DELETE", `${T}/${review_task_id}`)).status).toBe(403);
    expect((await cli(w.worker.apiKey, "PUT", `${T}/${review_task_id}`, { title: "Nothing to see" })).status).toBe(403);
    const byPerson = await call(`/api/v1/tasks/${id}/complete`, { token: w.member.token, body: { result: "Mine", git_diff_stats: diff("9999999") } });
    expect(byPerson.status, byPerson.text).toBe(403);
    const byOther = await cli(w.orchestrator.apiKey, "POST", `${T}/${id}/complete`, { result: "Mine", git_diff_stats: diff("9999999") });
    expect(byOther.status, byOther.text).toBe(403);
    const task = (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json;
    expect(task).toMatchObject({ review: { status: "reviewing", attempt: 1 }, result: { summary: "Done" } });
    expect((await call(`/api/v1/tasks/${review_task_id}`, { token: w.admin })).json.title).toBe("Review: Guarded");
  });
});

describe("the reviewer's session", () => {
  it("is given the review task, so its daemon starts the agent on it; never the worker's session", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent", capability: "security-review" }, max_retries: 2 }));
    const other = await registerReviewer(w.admin, "security-review");
    const reviewerDaemon = await fakeDaemon(other.apiKey);
    const session = await openSession(other.apiKey, w.project.id, "reviewing");
    const id = await workingTask("Session review");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Done", git_diff_stats: diff("7777777") }));
    const { review_task_id } = await reviewTaskOf(id, 1);
    const pushed = await reviewerDaemon.socket.next((f) => f.type === "task_assigned" && f.task_id === review_task_id);
    expect(pushed).toMatchObject({ session_id: session, title: "Review: Session review" });
    expect((await call(`/api/v1/tasks/${review_task_id}`, { token: w.admin })).json).toMatchObject({
      assigned_server_id: other.id,
      target_session_id: session,
    });
  });
});

describe("review steps a lost follow-up left undone", () => {
  it("are made again by the hourly sweep: an attempt with no review task gets one, one whose review task ended is settled", async () => {
    await expectOk(setPolicy({ enabled: true, reviewer: { kind: "agent" }, max_retries: 2 }));
    const id = await workingTask("Stranded");
    // A completion whose attempt was opened but never handed to a reviewer, as if the room restarted in between.
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Done", git_diff_stats: diff("5555555") }));
    const first = await reviewTaskOf(id, 1);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await env.DB.prepare("UPDATE code_reviews SET review_task_id = NULL, requested_at = ?1 WHERE task_id = ?2").bind(old, id).run();
    expect(await wakeRoomsWithStrandedReviews(env)).toBe(1);
    const again = await reviewTaskOf(id, 1);
    expect(again.review_task_id).not.toBe(first.review_task_id);

    // Its review task completes, but the settling is lost: the sweep settles it from the task's result.
    await until(
      async () => (await call(`/api/v1/tasks/${again.review_task_id}`, { token: w.admin })).json.status,
      (s) => s === "assigned",
      "given",
    );
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${again.review_task_id}/start`));
    await env.DB.prepare("UPDATE code_reviews SET requested_at = ?1 WHERE task_id = ?2").bind(old, id).run();
    await expectOk(cli(reviewer.apiKey, "POST", `${T}/${again.review_task_id}/complete`, { result: review(95) }));
    await until(
      async () => (await call(`/api/v1/tasks/${id}/reviews`, { token: w.admin })).json.reviews[0].status,
      (s) => s === "pass",
      "settled",
    );
    await env.DB.prepare("UPDATE code_reviews SET status = 'pending', score = NULL WHERE task_id = ?1").bind(id).run();
    await env.DB.prepare("UPDATE tasks SET review_status = 'reviewing' WHERE id = ?1").bind(id).run();
    expect(await wakeRoomsWithStrandedReviews(env)).toBe(1);
    expect((await call(`/api/v1/tasks/${id}/reviews`, { token: w.admin })).json.reviews[0]).toMatchObject({ status: "pass", score: 95 });
    expect(await wakeRoomsWithStrandedReviews(env)).toBe(0);
  });
});

describe("the policy", () => {
  it("is set by admins only, checked field by field, and never answers a key", async () => {
    const refused = await setPolicy({ enabled: true, reviewer: { kind: "model" }, pass_score: 50, warn_score: 70 });
    expect(refused.status).toBe(422);
    expect(refused.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["reviewer.endpoint", "reviewer.model", "warn_score"]);
    const member = await call(`/api/v1/projects/${w.project.id}/review-policy`, {
      method: "PUT",
      token: w.member.token,
      body: { enabled: false, reviewer: { kind: "agent" } },
    });
    expect(member.status).toBe(403);
    const read = await expectOk(call(`/api/v1/projects/${w.project.id}/review-policy`, { token: w.member.token }));
    expect(read.json).toMatchObject({
      enabled: true,
      reviewer: { kind: "agent", capability: "code-review", has_api_key: false },
      pass_score: 80,
      warn_score: 60,
    });
  });
});
