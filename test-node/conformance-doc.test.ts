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

  it("reads an A2A test named `[kit/file.py::test_name] ...` as the kit's file and test", () => {
    expect(kitTestOf("[protocol/test_agent_card.py::test_card_has_name] the card names the project")).toEqual({
      file: "protocol/test_agent_card.py",
      test: "test_card_has_name",
      says: "the card names the project",
    });
    expect(kitTestOf("the card names the project")).toBeNull();
    const report = {
      testResults: [
        {
          assertionResults: [
            { title: "[jsonrpc/test_json_rpc_compliance.py::test_parse_error] answers -32700", fullName: "x", status: "failed" },
            { title: "a test of the hub's own", fullName: "y", status: "passed" },
            { title: "[authentication/test_auth.py::test_no_credentials] answers 401", fullName: "z", status: "passed" },
          ],
        },
      ],
    };
    expect(a2aRows(report)).toEqual([
      ["`authentication/test_auth.py`", "`test_no_credentials`", "pass", "answers 401"],
      ["`jsonrpc/test_json_rpc_compliance.py`", "`test_parse_error`", "**failed**", "answers -32700"],
    ]);
  });
});
