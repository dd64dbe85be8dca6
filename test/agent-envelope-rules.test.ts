/** The agent-envelope dialect (seeds/agent-envelope.md) as pure rules, table by table: detection, validation, outcomes, the input envelope. */
import { describe, expect, it } from "vitest";
import { envelopeOutcome, envelopeParams, envelopePaths, escalationContext, inputEnvelope, isOutputEnvelope, parseOutputEnvelope, type EnvelopeTask } from "../src/protocol/agent-envelope";
import { normaliseResult } from "../src/domain/results";

const valid = { success: true, summary: "Validated spec. Found 3 gaps.", artifacts: [{ path: "specs/a/spec.md", operation: "update", content: "# Spec" }], notes: ["Ready"], recommendation: "proceed" };

describe("which results are output envelopes", () => {
  it.each([
    [valid, true],
    [{ success: false, recommendation: "retry" }, true],
    [{ success: "yes", recommendation: 7 }, true],
    [{ success: true, summary: "no recommendation" }, false],
    [{ recommendation: "proceed", summary: "no success" }, false],
    [{ $schema: "orchestratia/task-result/v1", summary: "done" }, false],
    ["a string result", false],
    [["success", "recommendation"], false],
    [null, false],
  ] as const)("%j → %s", (result, expected) => {
    expect(isOutputEnvelope(result)).toBe(expected);
  });
});

describe("a malformed envelope names its field", () => {
  const without = (key: string) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key));
  it.each([
    ["a recommendation outside the three", { ...valid, recommendation: "skip" }, "result.recommendation"],
    ["success that is not a boolean", { ...valid, success: "true" }, "result.success"],
    ["no summary", without("summary"), "result.summary"],
    ["a blank summary", { ...valid, summary: "   " }, "result.summary"],
    ["no artifacts", without("artifacts"), "result.artifacts"],
    ["artifacts that are not a list", { ...valid, artifacts: {} }, "result.artifacts"],
    ["an artifact operation other than create or update", { ...valid, artifacts: [{ path: "a.md", operation: "delete", content: "" }] }, "result.artifacts.0.operation"],
    ["an artifact without content", { ...valid, artifacts: [{ path: "a.md", operation: "create" }] }, "result.artifacts.0.content"],
    ["an artifact without a path", { ...valid, artifacts: [{ operation: "create", content: "x" }] }, "result.artifacts.0.path"],
    ["notes that are not strings", { ...valid, notes: ["ok", 3] }, "result.notes.1"],
    ["notes that are not a list", { ...valid, notes: "ready" }, "result.notes"],
  ])("%s → %s", (_, envelope, path) => {
    const parsed = parseOutputEnvelope(envelope);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors.map((e) => e.path)).toContain(path);
    // The result normaliser refuses it the same way: never stored as an opaque result.
    const normalised = normaliseResult(envelope, "agent-1");
    expect(normalised.ok).toBe(false);
  });

  it("keeps fields the seed does not name, and an empty artifact list", () => {
    const parsed = parseOutputEnvelope({ ...valid, artifacts: [], validation_report: { passed: 8 } });
    expect(parsed).toEqual({ ok: true, envelope: { ...valid, artifacts: [], validation_report: { passed: 8 } } });
  });
});

describe("the outcome rule", () => {
  it.each([
    [true, "proceed", { status: "done" }],
    [false, "proceed", { status: "failed", code: "AGENT_FAILED", message: "S" }],
    [true, "retry", { status: "failed", code: "AGENT_RETRY", message: "S" }],
    [false, "retry", { status: "failed", code: "AGENT_RETRY", message: "S" }],
    [true, "escalate", { status: "needs_human", question: "S" }],
    [false, "escalate", { status: "needs_human", question: "S" }],
  ] as const)("success %s + %s → %j", (success, recommendation, outcome) => {
    expect(envelopeOutcome({ success, summary: "S", recommendation })).toEqual(outcome);
  });

  it("a normalised envelope result is the envelope itself, unstructured, with its outcome", () => {
    expect(normaliseResult({ ...valid, recommendation: "retry" }, "agent-1")).toEqual({
      ok: true,
      result: { ...valid, recommendation: "retry" },
      structured: false,
      warnings: [],
      envelope: { status: "failed", code: "AGENT_RETRY", message: valid.summary },
    });
    const legacy = normaliseResult({ summary: "no envelope" }, "agent-1");
    expect(legacy.ok && legacy.envelope).toBeUndefined();
  });

  it("an escalation's context is what the agent produced and noted", () => {
    expect(escalationContext({ ...valid, recommendation: "escalate" })).toEqual({ success: true, recommendation: "escalate", notes: ["Ready"], artifacts: valid.artifacts });
    expect(escalationContext({ success: false, summary: "x", artifacts: [], recommendation: "escalate" })).toEqual({ success: false, recommendation: "escalate", notes: [], artifacts: [] });
  });
});

const bare: EnvelopeTask = {
  id: "7b6f0c1e-0000-4000-8000-000000000001",
  type: "validate",
  spec: "Check the spec",
  retry_count: 0,
  target_repo: null,
  structured_spec: null,
  payload: null,
  context: null,
  resolved_inputs: {},
  recent_notes: [],
};

describe("input envelope: context", () => {
  it.each([
    ["the task id when nothing names a feature", {}, { feature_id: bare.id, workflow: "validate", iteration: 1 }],
    ["context.feature_id", { context: { feature_id: "005-user-auth" } }, { feature_id: "005-user-auth", workflow: "validate", iteration: 1 }],
    ["a camel-case context.featureId", { context: { featureId: "006-x" } }, { feature_id: "006-x", workflow: "validate", iteration: 1 }],
    ["structured_spec.feature_id", { structured_spec: { feature_id: "007-y" } }, { feature_id: "007-y", workflow: "validate", iteration: 1 }],
    ["context.workflow over the type", { context: { workflow: "specify" } }, { feature_id: bare.id, workflow: "specify", iteration: 1 }],
    ["iteration = retry_count + 1", { retry_count: 2 }, { feature_id: bare.id, workflow: "validate", iteration: 3 }],
  ])("%s", (_, task, context) => {
    expect(inputEnvelope({ ...bare, ...task }, []).context).toEqual(context);
  });
});

describe("input envelope: paths", () => {
  it.each([
    ["nothing → {}", {}, {}],
    ["the target repository", { target_repo: "api-gateway" }, { repo: "api-gateway" }],
    [
      "file references, by name or by path; task and url references are not paths",
      {
        structured_spec: {
          input_context: {
            references: [
              { type: "file", id: "specs/005/spec.md", name: "spec" },
              { type: "file", id: ".humaninloop/memory/constitution.md" },
              { type: "url", url: "https://example.com" },
              { type: "task", id: bare.id },
            ],
          },
        },
      },
      { spec: "specs/005/spec.md", ".humaninloop/memory/constitution.md": ".humaninloop/memory/constitution.md" },
    ],
    ["expected artifacts", { structured_spec: { output_expectations: { artifacts: ["docs/out.md"] } } }, { "docs/out.md": "docs/out.md" }],
    ["a payload's own paths (string values only)", { payload: { paths: { feature_root: "specs/005/", bad: 3 } } }, { feature_root: "specs/005/" }],
  ])("%s", (_, task, paths) => {
    expect(envelopePaths({ ...bare, ...task })).toEqual(paths);
  });
});

describe("input envelope: task", () => {
  it.each([
    ["the spec text when there is nothing else", {}, { spec: "Check the spec" }],
    ["the structured spec", { structured_spec: { requirements: [] } }, { requirements: [] }],
    ["a task-format payload over the structured spec", { payload: { bounds: 3 }, structured_spec: { requirements: [] } }, { bounds: 3 }],
    ["a payload that is not an object, wrapped", { payload: "raw" }, { payload: "raw" }],
  ])("params: %s", (_, task, params) => {
    expect(envelopeParams({ ...bare, ...task })).toEqual(params);
    expect(inputEnvelope({ ...bare, ...task }, []).task).toEqual({ action: "validate", params });
  });
});

describe("input envelope: prior_context", () => {
  it("passes upstream envelopes' notes forward, then resolved inputs in short, then the task's notes", () => {
    const long = "x".repeat(500);
    const envelope = inputEnvelope(
      { ...bare, resolved_inputs: { schema: { tables: 3 }, missing: null, big: long }, recent_notes: [{ content: "Focus on auth" }] },
      [
        { ...valid, notes: ["Spec complete", "3 edge cases identified"] },
        { summary: "a legacy result: no notes to pass" },
        { success: true, summary: "s", artifacts: [], recommendation: "proceed" },
        undefined,
      ],
    );
    expect(envelope.prior_context).toEqual([
      "Spec complete",
      "3 edge cases identified",
      'Input schema: {"tables":3}',
      "Input missing: not delivered",
      `Input big: ${"x".repeat(199)}…`,
      "Focus on auth",
    ]);
  });

  it("is empty for a task with nothing before it", () => {
    expect(inputEnvelope(bare, []).prior_context).toEqual([]);
  });
});
