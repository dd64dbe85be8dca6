import { describe, expect, it } from "vitest";
import type { Task } from "../web/src/types";
import { laidOut, titleLines } from "../web/src/views/graph-layout";

const task = (id: string, dependsOn: string[] = []) =>
  ({ id, title: id, dependencies: dependsOn.map((d) => ({ depends_on_task_id: d, dependency_type: "blocks", contract_key: null })) }) as unknown as Task;

describe("the graph's layout", () => {
  it("measures no tasks as nothing to draw, and one task or a chain as finite and positive", () => {
    expect(laidOut([])).toEqual({ nodes: [], edges: [], width: 0, height: 0 });
    for (const tasks of [[task("a")], [task("a"), task("b", ["a"])]]) {
      const laid = laidOut(tasks);
      expect(Number.isFinite(laid.width) && laid.width > 0, `width ${laid.width}`).toBe(true);
      expect(Number.isFinite(laid.height) && laid.height > 0, `height ${laid.height}`).toBe(true);
      expect(laid.nodes).toHaveLength(tasks.length);
    }
  });
});

describe("a node's title", () => {
  it("stays on one line when it fits", () => {
    expect(titleLines("Fix the login page")).toEqual(["Fix the login page"]);
    expect(titleLines("")).toEqual([]);
  });

  it("breaks between words onto a second line, and ends what does not fit with an ellipsis", () => {
    expect(titleLines("Add retries to the webhook deliveries")).toEqual(["Add retries to the", "webhook deliveries"]);
    const lines = titleLines("Move every dashboard table to stacked rows on phones and tablets");
    expect(lines).toEqual(["Move every dashboard", "table to stacked rows o…"]);
    expect(lines.every((l) => l.length <= 24)).toBe(true);
  });

  it("cuts a word longer than a line", () => {
    expect(titleLines("src/web/views/graph-layout-with-a-long-name.ts")).toEqual(["src/web/views/graph-layo", "ut-with-a-long-name.ts"]);
    expect(titleLines("x".repeat(60))).toEqual(["x".repeat(24), `${"x".repeat(23)}…`]);
  });
});
