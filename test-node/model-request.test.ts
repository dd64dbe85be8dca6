/** A model reviewer's request and the reading of its answer (src/integrations/code-review/model-request.ts). */
import { describe, expect, it } from "vitest";
import { cappedDiff, errorMessage, MAX_DIFF_BYTES, modelUrl, readAnswer, reviewPrompt } from "../src/integrations/code-review/model-request";
import { commitsReadable, diffCommand } from "../src/integrations/code-review/review-subject";
import { diffRange } from "../src/domain/code-review";

describe("the endpoint", () => {
  it("is the full URL as given, or a base the style's path is added to", () => {
    expect(modelUrl("https://api.openai.com/v1", "openai")).toBe("https://api.openai.com/v1/chat/completions");
    expect(modelUrl("https://openrouter.ai/api/v1/", "openai")).toBe("https://openrouter.ai/api/v1/chat/completions");
    expect(modelUrl("https://llm.example/v1/chat/completions", "openai")).toBe("https://llm.example/v1/chat/completions");
    expect(modelUrl("http://localhost:11434", "openai")).toBe("http://localhost:11434/v1/chat/completions");
    expect(modelUrl("https://api.anthropic.com", "anthropic")).toBe("https://api.anthropic.com/v1/messages");
    expect(modelUrl("https://api.anthropic.com/v1/messages", "anthropic")).toBe("https://api.anthropic.com/v1/messages");
  });
});

describe("the diff", () => {
  it("is cut beyond the bound without splitting a character, and the prompt says so", () => {
    const big = "é".repeat(MAX_DIFF_BYTES);
    const cut = cappedDiff(big);
    expect(cut.cut).toBe(true);
    expect(new TextEncoder().encode(cut.text).byteLength).toBe(MAX_DIFF_BYTES);
    expect(cut.text.endsWith("é")).toBe(true);
    const prompt = reviewPrompt({
      title: "T",
      spec: "S",
      acceptanceCriteria: [],
      range: "a..b",
      stats: { files_changed: 1, insertions: 1, deletions: 0 },
      diff: big,
    });
    expect(prompt).toContain(`The diff was cut: it has ${2 * MAX_DIFF_BYTES} bytes`);
    expect(cappedDiff("small").cut).toBe(false);
  });

  it("is read with each commit single-quoted, and only commits that are hashes", () => {
    expect(diffCommand({ base: "abc1~1", head: "abc1" }).command).toBe("git diff --no-color 'abc1'~1..'abc1'");
    expect(commitsReadable({ base: "a1b2c3d~1", head: "d4e5f6a" })).toBe(true);
    expect(commitsReadable({ base: "--output=/tmp/x", head: "d4e5f6a" })).toBe(false);
    expect(commitsReadable({ base: "a1b2c3d", head: "HEAD" })).toBe(false);
    expect(diffCommand(diffRange({ base_commit: null, head_commit: null })).range).toBe("HEAD~1..HEAD");
  });
});

describe("an answer", () => {
  const review = { score: 70, status: "warn", summary: "ok", findings: [{ severity: "warning", title: "t", detail: "d", path: null, line: 3 }] };
  it("gives the review, absent fields as null made absent", () => {
    const got = readAnswer("openai", { choices: [{ message: { content: JSON.stringify(review), refusal: null }, finish_reason: "stop" }] });
    expect(got).toEqual({ ok: true, review: { ...review, findings: [{ severity: "warning", title: "t", detail: "d", line: 3 }] } });
    expect(readAnswer("anthropic", { content: [{ type: "tool_use", name: "review", input: review }], stop_reason: "tool_use" }).ok).toBe(true);
  });

  it("says why there is no review", () => {
    expect(readAnswer("openai", { choices: [{ message: { content: null, refusal: "I can't" } }] })).toEqual({
      ok: false,
      error: "the model refused to review: I can't",
    });
    expect(readAnswer("openai", { choices: [{ message: { content: '{"score": 7' }, finish_reason: "length" }] })).toMatchObject({
      error: expect.stringContaining("token limit"),
    });
    expect(readAnswer("anthropic", { content: [], stop_reason: "refusal" })).toMatchObject({ ok: false, error: expect.stringContaining("refused") });
    expect(readAnswer("anthropic", { content: [{ type: "text", text: "fine" }], stop_reason: "end_turn" })).toMatchObject({
      error: expect.stringContaining("no call of the review tool"),
    });
  });

  it("of an error keeps the provider's message, never the key", () => {
    expect(errorMessage(JSON.stringify({ error: { message: "Incorrect API key provided: sk-secret" } }), "sk-secret")).toBe(
      "Incorrect API key provided: [key]",
    );
  });
});
