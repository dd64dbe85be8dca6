/**
 * docs/CONFORMANCE.md is written only by `npm run conformance` (scripts/conformance.mjs): its header must name the
 * conformance package's version package.json pins, so a version bump without a fresh run fails here. And the A2A
 * table reads the names the TCK port gives its tests.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { a2aRows, kitTestOf, mcpPackageLine } from "../scripts/conformance-doc.mjs";

const root = join(import.meta.dirname, "..");
const pinned: string = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies["@modelcontextprotocol/conformance"];

describe("docs/CONFORMANCE.md", () => {
  it("names the pinned conformance package in its header, as the last `npm run conformance` ran it", () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    const header = readFileSync(join(root, "docs/CONFORMANCE.md"), "utf8").split("\n## ")[0]!;
    expect(header, "run `npm run conformance` after changing the pinned version").toContain(mcpPackageLine(pinned));
  });

  it("reads an A2A test named after the kit's tests and requirements, one row per kit test", () => {
    const both = "[tests/mandatory/protocol/test_tasks_get_method.py::test_get_task | tests/compatibility/core/test_get.py::TestGet::test_get[jsonrpc]]";
    expect(kitTestOf(`${both} {CORE-GET-001, CORE-GET-002} reads the task back`)).toEqual({
      tests: [
        { file: "tests/mandatory/protocol/test_tasks_get_method.py", test: "test_get_task" },
        { file: "tests/compatibility/core/test_get.py", test: "TestGet::test_get[jsonrpc]" },
      ],
      requirements: ["CORE-GET-001", "CORE-GET-002"],
      says: "reads the task back",
    });
    expect(kitTestOf("the card names the project")).toBeNull();
    const report = {
      testResults: [
        {
          assertionResults: [
            { title: "[tests/mandatory/jsonrpc/test_json_rpc_compliance.py::test_parse_error] answers -32700", status: "failed" },
            { title: "a test of the hub's own", status: "passed" },
            { title: `${both} {CORE-GET-001} reads it`, status: "passed" },
          ],
        },
      ],
    };
    expect(a2aRows(report)).toEqual([
      ["`tests/compatibility/core/test_get.py`", "`TestGet::test_get[jsonrpc]`", "CORE-GET-001", "pass", "reads it"],
      ["`tests/mandatory/jsonrpc/test_json_rpc_compliance.py`", "`test_parse_error`", "", "**failed**", "answers -32700"],
      ["`tests/mandatory/protocol/test_tasks_get_method.py`", "`test_get_task`", "CORE-GET-001", "pass", "reads it"],
    ]);
  });
});
