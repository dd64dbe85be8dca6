/** The code-review policy's form as a draft and back (web/src/review-policy-draft.ts), and a task's review mark (web/src/review-marks.ts). */
import { describe, expect, it } from "vitest";
import { bodyOf, draftOf } from "../web/src/review-policy-draft";
import { reviewMarkOf } from "../web/src/review-marks";
import type { ReviewPolicy } from "../web/src/types";

const policy: ReviewPolicy = {
  enabled: true,
  match: { types: ["feature", "bugfix"], priorities: ["high"], paths: ["src/*"], min_lines: 10 },
  reviewer: {
    kind: "model",
    capability: "code-review",
    endpoint: "https://models.example.com/v1/messages",
    api_style: "anthropic",
    model: "m",
    has_api_key: true,
  },
  pass_score: 85,
  warn_score: 50,
  max_retries: 3,
  on_final_failure: "needs_human",
};

describe("the review policy's draft", () => {
  it("sends back what it read, keeping the kept key by sending none", () => {
    const body = bodyOf(draftOf(policy));
    expect(body).toEqual({
      enabled: true,
      match: { types: ["feature", "bugfix"], priorities: ["high"], paths: ["src/*"], min_lines: 10 },
      reviewer: { kind: "model", endpoint: "https://models.example.com/v1/messages", api_style: "anthropic", model: "m" },
      pass_score: 85,
      warn_score: 50,
      max_retries: 3,
      on_final_failure: "needs_human",
    });
    expect(body.reviewer).not.toHaveProperty("api_key");
  });

  it("sends a typed key, splits lists at commas, leaves blanks out, and sends what is not a number for the hub to refuse", () => {
    const draft = { ...draftOf(policy), apiKey: "sk-new", types: " feature ,, docs ", paths: "", minLines: "", passScore: "", warnScore: "abc" };
    const body = bodyOf(draft);
    expect(body.reviewer.api_key).toBe("sk-new");
    expect(body.match).toEqual({ types: ["feature", "docs"], priorities: ["high"] });
    expect(body.pass_score).toBeUndefined();
    expect(body.warn_score).toBeNaN();
  });

  it("drops the model's fields for an agent, with the default tag when none is typed", () => {
    expect(bodyOf({ ...draftOf(policy), kind: "agent", capability: " " }).reviewer).toEqual({ kind: "agent", capability: "code-review" });
  });
});

describe("a task's review mark", () => {
  it("marks a task the loop holds open and one that failed review, and nothing once accepted", () => {
    expect(reviewMarkOf({ status: "reviewing", attempt: 1 })).toMatchObject({ kind: "in-review", title: "Code review: attempt 1 is being reviewed" });
    expect(reviewMarkOf({ status: "changes_requested", attempt: 2 })?.kind).toBe("in-review");
    expect(reviewMarkOf({ status: "failed", attempt: 3 })).toMatchObject({ kind: "review-failing", text: "review failed" });
    expect(reviewMarkOf({ status: "error", attempt: 1 })?.kind).toBe("review-failing");
    expect(reviewMarkOf({ status: "passed", attempt: 1 })).toBeNull();
    expect(reviewMarkOf({ status: "warned", attempt: 3 })).toBeNull();
    expect(reviewMarkOf(null)).toBeNull();
  });
});
