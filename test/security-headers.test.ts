/** The headers that keep a browser from running or guessing what the Worker answers. */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "./helpers";
import { createWorld, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Security headers");
});

describe("every answer of the Worker", () => {
  it("says nosniff: JSON, problems, refusals of the HTTP layer, pages and the API's description", async () => {
    const answers = [
      await call("/api/v1/health"),
      await call(`/api/v1/projects/${w.project.id}`, { token: w.admin }),
      await call("/api/v1/projects", { token: "not-a-token" }),
      await call("/api/v1/nothing-here"),
      await call("/api/v1/health", { method: "DELETE" }),
      await call("/api/v1/projects", { token: w.admin, raw: "{", headers: { "Content-Type": "application/json" } }),
      await call("/api/v1/openapi.json"),
      await call("/docs"),
      await call("/docs/problems"),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404, 405, 400, 200, 200, 200]);
    for (const answer of answers) expect(answer.headers.get("X-Content-Type-Options"), answer.text.slice(0, 100)).toBe("nosniff");
  });
});

describe("the reference pages", () => {
  it("load nothing from elsewhere and are never framed, like the dashboard", async () => {
    for (const path of ["/docs", "/docs/problems"]) {
      const page = await call(path);
      const policy = page.headers.get("Content-Security-Policy") ?? "";
      expect(policy, path).toMatch(/^default-src 'none'; /);
      expect(policy, path).toContain("frame-ancestors 'none'");
      expect(policy, path).toContain("base-uri 'none'");
      expect(policy, path).not.toMatch(/https?:|\*/);
      expect(page.headers.get("X-Frame-Options")).toBe("DENY");
      expect(page.headers.get("Referrer-Policy")).toBe("no-referrer");
    }
    // The problem codes are a page without script: its policy allows none, and only its own style block.
    const problems = (await call("/docs/problems")).headers.get("Content-Security-Policy")!;
    expect(problems).not.toContain("script-src");
    expect(problems).toMatch(/style-src 'sha256-[\w+/=]+'$/);
    expect((await call("/docs")).headers.get("Content-Security-Policy")).toContain("script-src 'self';");
  });
});
