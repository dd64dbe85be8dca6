/**
 * Every path the API describes reaches the Worker before the dashboard's static assets: a path missing from
 * wrangler.toml's `run_worker_first` would be answered by the assets (a 405 to a POST) in every deployment, though
 * the workerd tests, which call the Worker directly, pass.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const document = JSON.parse(readFileSync(join(root, "client/openapi.json"), "utf8"));
const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
const patterns: string[] = JSON.parse(toml.match(/^run_worker_first = (\[.*\])$/m)![1]!);

/** Whether an assets routing pattern (a trailing `*` matches any rest of the path) takes this path. */
const takes = (pattern: string, path: string) => (pattern.endsWith("*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern);

describe("run_worker_first", () => {
  it("sends every described path to the Worker", () => {
    const missed = Object.keys(document.paths)
      .map((p) => p.replace(/\{[^}]+\}/g, "x"))
      .filter((path) => !patterns.some((pattern) => takes(pattern, path)));
    expect(missed).toEqual([]);
    expect(Object.keys(document.paths)).toContain("/v1/metrics");
  });

  it("would notice a path the patterns miss", () => {
    expect(patterns.some((pattern) => takes(pattern, "/v2/metrics"))).toBe(false);
  });
});
