/** Result forms and protocol schemas, as pure logic. */
import { describe, expect, it } from "vitest";
import { normaliseResult } from "../src/domain/results";
import { checkTaskProtocol } from "../src/protocol/hub-api";
import { majorVersionOf, negotiateProtocol } from "../src/domain/protocol-version";

describe("normaliseResult", () => {
  it("wraps a string as {summary, completed_by}", () => {
    expect(normaliseResult("done it", "dev-1")).toEqual({ ok: true, result: { summary: "done it", completed_by: "agent:dev-1" }, structured: false, warnings: [] });
  });

  it("wraps other JSON values the CLI can send", () => {
    for (const value of [42, true, null, [1, 2]]) {
      const n = normaliseResult(value, "dev-1");
      expect(n).toMatchObject({ ok: true, structured: false, result: { summary: JSON.stringify(value), value, completed_by: "agent:dev-1" } });
    }
  });

  it("stores a legacy object as is", () => {
    const legacy = { files: 3, notes: "anything" };
    expect(normaliseResult(legacy, "x")).toEqual({ ok: true, result: legacy, structured: false, warnings: [] });
  });

  it("validates a task-result/v1 and takes contract entries without status as fulfilled data", () => {
    const n = normaliseResult(
      {
        $schema: "orchestratia/task-result/v1",
        summary: "ok",
        contracts: {
          explicit: { status: "partial", data: { a: 1 } },
          wrapped: { type: "api_schema", description: "d", data: { paths: ["/x"] } },
          bare: { type: "module_export", path: "src/a.ts", exports: ["a"] },
        },
      },
      "x",
    );
    expect(n.ok && n.structured).toBe(true);
    if (!n.ok) return;
    expect(n.result.contracts).toEqual({
      explicit: { status: "partial", data: { a: 1 } },
      wrapped: { type: "api_schema", description: "d", status: "fulfilled", data: { paths: ["/x"] } },
      bare: { type: "module_export", path: "src/a.ts", exports: ["a"], status: "fulfilled", data: { type: "module_export", path: "src/a.ts", exports: ["a"] } },
    });
  });

  it("refuses an invalid task-result/v1 with field paths", () => {
    const n = normaliseResult({ $schema: "orchestratia/task-result/v1", contracts: { "bad key": {}, good_key: { status: "done" } }, tests: { passed: -1 } }, "x");
    expect(n.ok).toBe(false);
    if (n.ok) return;
    expect(n.errors.map((e) => e.path).sort()).toEqual(["result.contracts.bad key", "result.contracts.good_key.status", "result.summary", "result.tests.passed"].sort());
  });

  it("accepts another version of task-result with a warning, and a foreign $schema as legacy with a warning", () => {
    const v2 = normaliseResult({ $schema: "orchestratia/task-result/v2", summary: "s" }, "x");
    expect(v2).toMatchObject({ ok: true, structured: true, warnings: [expect.stringContaining("orchestratia/task-result/v2")] });
    const foreign = normaliseResult({ $schema: "https://example.com/other", summary: "s" }, "x");
    expect(foreign).toMatchObject({ ok: true, structured: false, warnings: [expect.stringContaining("unrecognised")] });
  });
});

describe("task protocol objects", () => {
  const spec = { $schema: "orchestratia/task-spec/v1", requirements: [{ description: "x", priority: "must" }] };

  it("accepts the seed's full example", () => {
    const full = {
      ...spec,
      input_context: { references: [{ type: "task", id: crypto.randomUUID() }, { type: "url", url: "https://datatracker.ietf.org/doc/html/rfc7519" }, { type: "file", id: "a.md" }] },
      constraints: { languages: ["typescript"], frameworks: ["express"], testing: "required", no_breaking_changes: true, max_files_changed: 15, custom: { node_version: ">=18" } },
      output_expectations: { contracts: { auth_middleware: { description: "d", format: "module_export", required: true } }, artifacts: ["test_report"] },
    };
    expect(checkTaskProtocol({ structured_spec: full, requirements: { repo: "api-gateway", languages: ["rust"], prefer_server: "dev-backend" } })).toEqual({ ok: true, warnings: [] });
  });

  it("enforces the task-spec rules: a requirement, MoSCoW, reference types, contract keys", () => {
    const check = checkTaskProtocol({
      structured_spec: {
        $schema: "orchestratia/task-spec/v1",
        requirements: [{ description: "x", priority: "urgent" }],
        input_context: { references: [{ type: "url" }, { type: "ftp", id: "x" }, { type: "task", id: "not-a-uuid" }] },
        constraints: { testing: "sometimes" },
        output_expectations: { contracts: { "no-dashes": { description: "d" } } },
      },
    });
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.errors.map((e) => e.path).sort()).toEqual(
      [
        "structured_spec.requirements.0.priority",
        "structured_spec.input_context.references.0.url",
        "structured_spec.input_context.references.1.type",
        "structured_spec.input_context.references.2.id",
        "structured_spec.constraints.testing",
        "structured_spec.output_expectations.contracts.no-dashes",
      ].sort(),
    );
    const empty = checkTaskProtocol({ structured_spec: { $schema: "orchestratia/task-spec/v1", requirements: [] } });
    expect(empty).toMatchObject({ ok: false, errors: [{ path: "structured_spec.requirements", message: "must have at least one requirement" }] });
    expect(checkTaskProtocol({ structured_spec: { requirements: spec.requirements } })).toMatchObject({ ok: false, errors: [{ path: "structured_spec.$schema" }] });
  });

  it("accepts a known prefix with an unknown version, with a warning", () => {
    const check = checkTaskProtocol({ structured_spec: { ...spec, $schema: "orchestratia/task-spec/v9" }, requirements: { $schema: "orchestratia/requirements/v3" } });
    expect(check).toEqual({ ok: true, warnings: [expect.stringContaining("task-spec/v9"), expect.stringContaining("requirements/v3")] });
  });
});

describe("protocol versions", () => {
  it("reads major versions and refuses incompatible declarations", () => {
    expect(["orchestratia/v1", "v1", "1", "1.4.2", "orchestratia/task-spec/v1"].map(majorVersionOf)).toEqual([1, 1, 1, 1, 1]);
    expect(majorVersionOf("banana")).toBeNull();
    expect(negotiateProtocol(undefined)).toBe("orchestratia/v1");
    expect(negotiateProtocol(["v2", "3.0"])).toBeNull();
    // An empty list declares no version at all: nothing in common with the hub.
    expect(negotiateProtocol([])).toBeNull();
  });
});
