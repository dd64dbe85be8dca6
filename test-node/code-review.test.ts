/** The code-review loop's pure rules: which completions are reviewed, what a score means, what follows, what is said. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_REVIEW_POLICY, fixPrompt, nextStep, policyReviews, verdictOf, type Review, type ReviewPolicy } from "../src/domain/code-review";
import { reviewInResult } from "../src/protocol/code-review";
import { notification } from "../src/integrations/telegram/messages";

const policy = (over: Partial<ReviewPolicy> = {}): ReviewPolicy => ({ ...DEFAULT_REVIEW_POLICY, enabled: true, ...over });
const task = { type: "feature", priority: "high", requirements: { tags: ["Backend"] }, structuredSpec: null };
const diff = (paths: string[], lines = 20) => ({
  files_changed: paths.length,
  insertions: lines,
  deletions: 0,
  files: paths.map((path) => ({ path })),
  binary_files: [],
});

describe("which completions a policy reviews", () => {
  it("reviews only a change, when on, meeting every criterion it sets", () => {
    expect(policyReviews(policy({ enabled: false }), task, diff(["a.ts"]))).toBe(false);
    expect(policyReviews(policy(), task, null)).toBe(false);
    expect(policyReviews(policy(), task, diff([]))).toBe(false);
    expect(policyReviews(policy(), task, diff(["a.ts"]))).toBe(true);
    expect(policyReviews(policy({ match: { types: ["FEATURE"] } }), task, diff(["a.ts"]))).toBe(true);
    expect(policyReviews(policy({ match: { types: ["bugfix"] } }), task, diff(["a.ts"]))).toBe(false);
    expect(policyReviews(policy({ match: { priorities: ["critical"] } }), task, diff(["a.ts"]))).toBe(false);
    expect(policyReviews(policy({ match: { tags: ["backend"] } }), task, diff(["a.ts"]))).toBe(true);
    expect(policyReviews(policy({ match: { tags: ["frontend"] } }), task, diff(["a.ts"]))).toBe(false);
    expect(policyReviews(policy({ match: { paths: ["src/*.ts"] } }), task, diff(["docs/a.md", "src/a.ts"]))).toBe(true);
    expect(policyReviews(policy({ match: { paths: ["src/*.ts"] } }), task, diff(["docs/a.md"]))).toBe(false);
    expect(policyReviews(policy({ match: { min_lines: 21 } }), task, diff(["a.ts"], 20))).toBe(false);
    expect(policyReviews(policy({ match: { min_lines: 20 } }), task, diff(["a.ts"], 20))).toBe(true);
  });
});

describe("what follows a review", () => {
  /** The prompt of a failing first review of task "Auth" under the default thresholds and two retries. */
  const promptFor = (review: Review) =>
    fixPrompt({ taskId: "0123456789abcdef", title: "Auth", attempt: 1, maxRetries: 2, verdict: "fail", policy: policy(), review });

  it("passes at the pass score, warns down to the warn score, fails below", () => {
    const p = { pass_score: 80, warn_score: 60 };
    expect([100, 80, 79, 60, 59, 0].map((s) => verdictOf(s, p))).toEqual(["pass", "pass", "warn", "warn", "fail", "fail"]);
  });

  it("asks for a fix while attempts remain, then accepts a warn and ends a fail", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("pass" as const, "warn" as const, "fail" as const),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 10 }),
        (verdict, attempt, max) => {
          const step = nextStep(verdict, attempt, { max_retries: max });
          if (verdict === "pass") return step.kind === "accept" && step.status === "passed";
          if (attempt <= max) return step.kind === "fix";
          return verdict === "warn" ? step.kind === "accept" && step.status === "warned" : step.kind === "final";
        },
      ),
    );
  });

  it("tells the worker the score, the findings worst first, and the command to complete again", () => {
    const prompt = promptFor({
      score: 40,
      summary: "Not safe yet.",
      findings: [
        { severity: "info", title: "Style", detail: "fine" },
        { severity: "warning", title: "Slow", detail: "O(n²)" },
        { severity: "error", title: "Leak", detail: "token logged", path: "src/a.ts", line: 3 },
      ],
    });
    expect(prompt).toContain('Code review of task "Auth" (#01234567), attempt 1 of 3: score 40/100 (fail; a pass needs 80).');
    expect(prompt.indexOf("[error] Leak (src/a.ts:3): token logged")).toBeLessThan(prompt.indexOf("[warning] Slow"));
    expect(prompt).not.toContain("Style");
    expect(prompt).toContain('orchestratia task complete 0123456789abcdef --result "<what you fixed>"');
  });

  it("stays short enough to be typed whole, ending with the command, however long the review", () => {
    const long = "x".repeat(10_000);
    const prompt = promptFor({
      score: 10,
      summary: long.repeat(2),
      findings: Array.from({ length: 200 }, () => ({ severity: "error" as const, title: long.slice(0, 500), detail: long, path: long.slice(0, 4000) })),
    });
    expect(prompt.length).toBeLessThan(25_000);
    expect(prompt).toContain("and 180 more");
    expect(prompt.endsWith('--result "<what you fixed>"`.')).toBe(true);
  });
});

describe("a review task's result", () => {
  it("carries its review as the seed's contract entry or as the review itself, and names what is wrong", () => {
    const review = { score: 70.4, status: "warn", summary: "ok", findings: [] };
    expect(reviewInResult({ contracts: { review: { status: "fulfilled", data: review } } })).toMatchObject({ ok: true, review: { score: 70 } });
    expect(reviewInResult({ contracts: { review } })).toMatchObject({ ok: true, review: { score: 70, status: "warn" } });
    expect(reviewInResult({ summary: "done" })).toMatchObject({ ok: false, issues: [{ path: "result.contracts.review" }] });
    const bad = reviewInResult({ contracts: { review: { status: "fulfilled", data: { score: "high", findings: [{ severity: "fatal", title: "x" }] } } } });
    expect(bad.ok ? [] : bad.issues.map((i) => i.path)).toEqual(["result.contracts.review.data.score", "result.contracts.review.data.findings.0.severity"]);
  });
});

describe("Telegram", () => {
  const ctx = { projectName: "Shop", taskTitle: "Auth" };

  it("tells of a review sent back, of one that could not be made, and of attempts run out, each once", () => {
    const back = notification(
      { type: "review_failed", task_id: "t", data: { attempt: 1, max_retries: 2, score: 40, summary: "Leaks", fix_requested: true } },
      ctx,
    );
    expect(back?.text).toContain("<b>Code review failed</b> · Shop · Auth");
    expect(back?.text).toContain("Score 40/100 · attempt 1 of 3: sent back to its agent to fix.");
    // The last attempt's fail is told by review_exhausted; an exhausted task asked of a person, by its question.
    expect(notification({ type: "review_failed", task_id: "t", data: { attempt: 3, max_retries: 2, score: 10, summary: "x" } }, ctx)).toBeNull();
    expect(notification({ type: "review_exhausted", task_id: "t", data: { attempt: 3, score: 10, action: "needs_human" } }, ctx)).toBeNull();
    expect(notification({ type: "review_exhausted", task_id: "t", data: { attempt: 3, score: 10, action: "keep_done" } }, ctx)?.text).toContain(
      "Score 10/100 after 3 attempts: the task stays done with a failing review.",
    );
    const error = notification(
      { type: "review_failed", task_id: "t", data: { attempt: 1, max_retries: 0, status: "error", error: "timed out", action: "keep_done" } },
      ctx,
    );
    expect(error?.text).toContain("timed out");
  });
});
