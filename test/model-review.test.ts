/**
 * The code-review loop with a model reviewer (API.md "Code review", `reviewer.kind: model`): the hub reads the
 * change as `git diff` through the worker's session (the daemon answers `remote_exec`), asks the model for a review
 * with structured output (OpenAI-compatible chat completions, or the Anthropic Messages API), and settles the attempt
 * with it. The model provider is the only thing faked (test/model-api-setup.ts).
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { call, until } from "./helpers";
import { cli, createWorld, expectOk, T, type World } from "./task-world";
import { wakeRoomsWithStrandedReviews } from "../src/cron/maintenance";
import { answerRemoteExec, fakeDaemon, type FakeDaemon } from "./fake-daemon";
import type { ScriptedAnswer } from "./model-api-setup";

const KEY = "sk-test-model-key-0123456789";
const SPEC = "Add JWT auth to the gateway: sign tokens with HS256 and check them on every route.";
const CRITERIA = ["Tokens expire after 15 minutes", "Requests without a token get 401"];
const DIFF = "diff --git a/src/auth.ts b/src/auth.ts\n+export const verify = (token: string) => jwt.verify(token, SECRET);\n";

let w: World;
let daemon: FakeDaemon;
const commands: string[] = [];

const diffStats = (head: string, base: string | null = null) => ({
  files_changed: 1,
  insertions: 40,
  deletions: 3,
  files: [{ path: "src/auth.ts", insertions: 40, deletions: 3 }],
  head_commit: head,
  base_commit: base,
  binary_files: [],
});

const aReview = (score: number, findings: unknown[] = []) => ({ score, status: score >= 80 ? "pass" : "fail", summary: `score ${score}`, findings });
const aFinding = { severity: "error", title: "Token never expires", detail: "exp is not set", path: "src/auth.ts", line: 12 };

const provider = (name: string) => `${inject("modelApi")}/control/${name}`;
async function script(name: string, answers: ScriptedAnswer[]) {
  await fetch(provider(name), { method: "POST", body: JSON.stringify({ answers }) });
}
const received = async (name: string) => ((await (await fetch(provider(name))).json()) as { received: { path: string; headers: any; body: any }[] }).received;

const setRemote = (on: boolean) => call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { remote_exec: on } } });

async function modelPolicy(name: string, style: "openai" | "anthropic", more: Record<string, unknown> = {}) {
  const endpoint = style === "openai" ? `${inject("modelApi")}/openai/${name}/v1` : `${inject("modelApi")}/anthropic/${name}`;
  await expectOk(
    call(`/api/v1/projects/${w.project.id}/review-policy`, {
      method: "PUT",
      token: w.admin,
      body: { enabled: true, reviewer: { kind: "model", endpoint, api_style: style, model: `${style}-reviewer-1`, api_key: KEY }, max_retries: 1, ...more },
    }),
  );
}

async function completedTask(title: string, head: string) {
  const created = await expectOk(
    cli(w.orchestrator.apiKey, "POST", T, { title, spec: SPEC, acceptance_criteria: CRITERIA, project_id: w.project.id, target_repo: "api-gateway" }),
    201,
  );
  const id = created.json.id as string;
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `Did ${title}`, git_diff_stats: diffStats(head) }));
  return id;
}

const attempts = async (id: string) => (await call(`/api/v1/tasks/${id}/reviews`, { token: w.admin })).json.reviews as any[];
const settled = (id: string, attempt: number) =>
  until(
    () => attempts(id),
    (r) => r[attempt - 1] && r[attempt - 1].status !== "pending",
    `attempt ${attempt} settled`,
    15_000,
  ).then((r) => r[attempt - 1]);
const taskOf = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json;
const projectEvents = async () => (await call(`/api/v1/projects/${w.project.id}/events?limit=500`, { token: w.admin })).json.events as any[];
const pendingJobs = () => (env.CODE_REVIEWER.get(env.CODE_REVIEWER.idFromName(w.project.id)) as any).pending() as Promise<unknown[]>;

beforeAll(async () => {
  w = await createWorld("Model review");
  daemon = await fakeDaemon(w.worker.apiKey);
  answerRemoteExec(daemon, (command) => {
    commands.push(command);
    return { exit_code: 0, stdout: DIFF, stderr: "" };
  });
  await expectOk(setRemote(true));
});

describe("an OpenAI-compatible model reviewer", () => {
  it("reviews the diff it reads in the worker's session, and passes the task", async () => {
    await modelPolicy("pass", "openai");
    await script("pass", [{ review: aReview(91, [{ ...aFinding, severity: "info", path: null, line: null }]) }]);
    const id = await completedTask("Auth middleware", "a1b2c3d");
    const attempt = await settled(id, 1);
    expect(attempt).toMatchObject({ status: "pass", score: 91, reviewer: { kind: "model", model: "openai-reviewer-1" }, error: null });
    expect(attempt.findings).toEqual([{ severity: "info", title: "Token never expires", detail: "exp is not set" }]);
    expect((await taskOf(id)).review).toEqual({ status: "passed", attempt: 1 });

    // The diff was read with git diff of the head's own commit, and the read is in the project's log.
    expect(commands).toContain("git diff --no-color 'a1b2c3d'~1..'a1b2c3d'");
    const reads = (await projectEvents()).filter((e) => e.type === "remote_exec" && e.data.code_review?.task_id === id);
    expect(reads).toHaveLength(1);
    expect(reads[0].data).toMatchObject({ session_id: w.workerSession, exit_code: 0, code_review: { attempt: 1, range: "a1b2c3d~1..a1b2c3d" } });

    // What the model was sent: the key as a bearer token, the model, the schema as strict structured output, the task and the diff.
    const [request] = await received("pass");
    expect(request!.path).toBe("/openai/pass/v1/chat/completions");
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toMatchObject({
      model: "openai-reviewer-1",
      response_format: { type: "json_schema", json_schema: { name: "review", strict: true } },
    });
    const prompt = request!.body.messages.map((m: { content: string }) => m.content).join("\n");
    for (const part of [SPEC, ...CRITERIA, DIFF, "Auth middleware"]) expect(prompt).toContain(part);
    expect(await pendingJobs()).toEqual([]);
  });

  it("sends a failing review to the worker's session, and reviews its next completion", async () => {
    await modelPolicy("loop", "openai");
    await script("loop", [{ review: aReview(45, [aFinding]) }, { review: aReview(88) }]);
    const id = await completedTask("Rate limiter", "1111111");
    expect(await settled(id, 1)).toMatchObject({ status: "fail", score: 45 });
    const fix = await until(
      () => daemon.socket.frames.filter((f) => f.type === "code_review_fix_request" && f.task_id === id),
      (f) => f.length > 0,
      "the fix request",
    );
    expect(fix[0]).toMatchObject({ session_id: w.workerSession, attempt: 1, score: 45 });
    expect(fix[0]!.prompt).toContain("[error] Token never expires (src/auth.ts:12): exp is not set");

    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "Set exp", git_diff_stats: diffStats("2222222", "1111111") }));
    expect(await settled(id, 2)).toMatchObject({ status: "pass", score: 88 });
    expect((await taskOf(id)).review).toEqual({ status: "passed", attempt: 2 });
    // Attempt 2 is read over the whole change: from the first attempt's base (its commit's parent) to the new head.
    expect(commands).toContain("git diff --no-color '1111111'~1..'2222222'");
    expect(await received("loop")).toHaveLength(2);
  });

  it("tries again after a 503, waiting as Retry-After asks", async () => {
    await modelPolicy("busy", "openai");
    await script("busy", [{ status: 503, retryAfter: "1" }, { review: aReview(95) }]);
    const id = await completedTask("Cache", "3333333");
    expect(await settled(id, 1)).toMatchObject({ status: "pass", score: 95 });
    const tries = await received("busy");
    expect(tries).toHaveLength(2);
  });
});

describe("an attempt whose reviewer was never woken", () => {
  it("is handed to the reviewer by the hourly sweep once it has waited long", async () => {
    await modelPolicy("stranded", "openai");
    await script("stranded", [{ review: aReview(90) }]);
    const id = await completedTask("Stranded", "3333334");
    await settled(id, 1);
    // As if the room's wake had been lost: the attempt pending again, opened an hour ago.
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await env.DB.prepare("UPDATE code_reviews SET status = 'pending', score = NULL, requested_at = ?1 WHERE task_id = ?2").bind(hourAgo, id).run();
    await script("stranded", [{ review: aReview(97) }]);
    // Five minutes after it was opened it is not stranded yet: its reviewer may still be at it.
    expect(await wakeRoomsWithStrandedReviews(env, Date.parse(hourAgo) + 5 * 60_000)).toBe(0);
    expect(await wakeRoomsWithStrandedReviews(env)).toBeGreaterThanOrEqual(1);
    expect(await settled(id, 1)).toMatchObject({ status: "pass", score: 97 });
    expect(await received("stranded")).toHaveLength(2);
  });
});

describe("an Anthropic model reviewer", () => {
  it("is made to call the review tool, and its input is the review", async () => {
    await modelPolicy("claude", "anthropic");
    await script("claude", [{ review: aReview(83) }]);
    const id = await completedTask("Audit log", "4444444");
    expect(await settled(id, 1)).toMatchObject({ status: "pass", score: 83, reviewer: { kind: "model", model: "anthropic-reviewer-1" } });
    const [request] = await received("claude");
    expect(request!.path).toBe("/anthropic/claude/v1/messages");
    expect(request!.headers).toMatchObject({ "x-api-key": KEY, "anthropic-version": "2023-06-01" });
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toMatchObject({ model: "anthropic-reviewer-1", tool_choice: { type: "tool", name: "review" }, tools: [{ name: "review" }] });
    expect(request!.body.messages[0].content).toContain(DIFF);
  });

  it("makes a refusal an error attempt, and the policy's final action asks a person", async () => {
    await modelPolicy("refuses", "anthropic", { on_final_failure: "needs_human" });
    await script("refuses", [{ refusal: "no" }]);
    const id = await completedTask("Crypto", "5555555");
    const attempt = await settled(id, 1);
    expect(attempt).toMatchObject({ status: "error" });
    expect(attempt.error).toContain("refused");
    const task = await until(
      () => taskOf(id),
      (t) => t.status === "needs_human",
      "the task sent to a person",
    );
    expect(task.review).toEqual({ status: "error", attempt: 1 });
  });
});

describe("a review that cannot be made", () => {
  it("is an error for a malformed answer, and the task stays done under keep_done", async () => {
    await modelPolicy("garbled", "openai", { on_final_failure: "keep_done" });
    await script("garbled", [{ raw: "Looks good to me!" }]);
    const id = await completedTask("Garbled", "6666666");
    expect(await settled(id, 1)).toMatchObject({ status: "error", error: "the model's answer is not JSON" });
    expect(await taskOf(id)).toMatchObject({ status: "done", review: { status: "error", attempt: 1 } });

    await script("garbled", [{ review: { ...aReview(70), score: 140 } }]);
    const invalid = await completedTask("Out of range", "6666667");
    expect((await settled(invalid, 1)).error).toBe("the model's review is not valid: review.score must be from 0 to 100");
  });

  it("is an error when the model answers too slowly", async () => {
    await modelPolicy("slow", "openai");
    await script("slow", [{ delayMs: 4_000, review: aReview(90) }]);
    const id = await completedTask("Slow", "7777777");
    expect(await settled(id, 1)).toMatchObject({ status: "error", error: "the model did not answer within 2 s" });
  });

  it("is an error at once when the endpoint refuses the request", async () => {
    await modelPolicy("unauthorized", "openai");
    await script("unauthorized", [{ status: 401 }, { review: aReview(90) }]);
    const id = await completedTask("Refused key", "9999990");
    expect(await settled(id, 1)).toMatchObject({ status: "error", error: "the endpoint answered 401: scripted 401" });
    expect(await received("unauthorized")).toHaveLength(1);
  });

  it("is an error when the project's remote_exec is off, and the model is never asked", async () => {
    await modelPolicy("no-remote", "openai");
    await script("no-remote", [{ review: aReview(90) }]);
    await expectOk(setRemote(false));
    try {
      const id = await completedTask("Closed", "8888888");
      const attempt = await settled(id, 1);
      expect(attempt.status).toBe("error");
      expect(attempt.error).toContain("remote_exec setting is off");
      expect(await received("no-remote")).toEqual([]);
      expect(commands.some((c) => c.includes("8888888"))).toBe(false);
    } finally {
      await expectOk(setRemote(true));
    }
  });

  it("never answers the key back, nor records it", async () => {
    const policy = (await expectOk(call(`/api/v1/projects/${w.project.id}/review-policy`, { token: w.admin }))).json;
    expect(policy.reviewer).toMatchObject({ kind: "model", has_api_key: true });
    expect(JSON.stringify(policy)).not.toContain(KEY);
    const events = await projectEvents();
    expect(events.length).toBeGreaterThan(10);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it("waits for the worker's daemon while it is not connected, and reviews once it is back", async () => {
    await modelPolicy("offline", "openai");
    await script("offline", [{ review: aReview(90) }]);
    // Closed once the link answered the close: it has no daemon from then on.
    await new Promise((closed) => {
      daemon.socket.ws.addEventListener("close", closed);
      daemon.socket.ws.close();
    });
    const id = await completedTask("Offline", "9999991");
    const waiting = await until(pendingJobs, (jobs) => jobs.length === 1 && typeof (jobs[0] as any).lastError === "string", "the job waiting");
    expect((waiting[0] as any).lastError).toMatch(/the daemon of server "worker-\w+" is not connected: the change could not be read/);
    expect(await received("offline")).toEqual([]);
    daemon = await fakeDaemon(w.worker.apiKey);
    answerRemoteExec(daemon, (command) => (commands.push(command), { exit_code: 0, stdout: DIFF, stderr: "" }));
    // The first retry comes 5 s later.
    expect(await settled(id, 1)).toMatchObject({ status: "pass", score: 90 });
  });

  it("does not follow a redirect: the key and the diff go only to the address checked", async () => {
    await modelPolicy("moved", "openai");
    await script("moved", [{ status: 307 }]);
    const id = await completedTask("Moved", "9999992");
    expect(await settled(id, 1)).toMatchObject({
      status: "error",
      error: "the endpoint answered 307 (a redirect, which the hub does not follow): give its final URL",
    });
  });
});
