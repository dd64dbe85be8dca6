/** Which rules reach a server and the order its hook takes them in, and the checks on what people write (src/domain/approval-rules.ts). */
import { describe, expect, it } from "vitest";
import { appliesTo, parseAgentFilter, rulesForServer, toolPatternProblem, type RuleOrderKey } from "../src/domain/approval-rules";

const rule = (id: string, over: Partial<RuleOrderKey & { isActive: boolean }> = {}) => ({
  id,
  action: "allow" as const,
  scopeType: "tenant" as const,
  scopeId: null,
  createdAt: "2026-01-01T00:00:00Z",
  isActive: true,
  ...over,
});

describe("approval rules for a server", () => {
  it("reach tenant-wide, its own server rules and the projects it serves (all of them when unscoped)", () => {
    const scoped = { id: "s1", projectIds: ["p1"] };
    expect(appliesTo({ scopeType: "tenant", scopeId: null }, scoped)).toBe(true);
    expect(appliesTo({ scopeType: "server", scopeId: "s1" }, scoped)).toBe(true);
    expect(appliesTo({ scopeType: "server", scopeId: "s2" }, scoped)).toBe(false);
    expect(appliesTo({ scopeType: "project", scopeId: "p1" }, scoped)).toBe(true);
    expect(appliesTo({ scopeType: "project", scopeId: "p2" }, scoped)).toBe(false);
    expect(appliesTo({ scopeType: "project", scopeId: "p2" }, { id: "s1", projectIds: null })).toBe(true);
    expect(appliesTo({ scopeType: "project", scopeId: "p2" }, { id: "s1", projectIds: [] })).toBe(false);
  });

  it("come deny first, then server, project, tenant, then oldest first and by id, inactive ones left out", () => {
    const rules = [
      rule("t-allow-late", { createdAt: "2026-01-02T00:00:00Z" }),
      rule("t-allow-b"),
      rule("t-allow-a"),
      rule("p-allow", { scopeType: "project", scopeId: "p1" }),
      rule("s-allow", { scopeType: "server", scopeId: "s1" }),
      rule("t-deny", { action: "deny" }),
      rule("p-deny", { action: "deny", scopeType: "project", scopeId: "p1" }),
      rule("s-deny-off", { action: "deny", scopeType: "server", scopeId: "s1", isActive: false }),
      rule("other-project", { action: "deny", scopeType: "project", scopeId: "p2" }),
    ];
    expect(rulesForServer(rules, { id: "s1", projectIds: ["p1"] }).map((r) => r.id)).toEqual([
      "p-deny",
      "t-deny",
      "s-allow",
      "p-allow",
      "t-allow-a",
      "t-allow-b",
      "t-allow-late",
    ]);
  });
});

describe("what people write", () => {
  it("tool patterns that can match a tool name pass; the others say why not", () => {
    for (const ok of ["*", "Bash", "mcp__github__*", "run_shell_?ommand", "[BW]*", "[!B]ash", "[]B]ash"]) expect(toolPatternProblem(ok), ok).toBeNull();
    expect(toolPatternProblem(" ")).toMatch(/must not be empty/);
    expect(toolPatternProblem("npm test")).toBe('can never match a tool name: tool names have no " "');
    expect(toolPatternProblem("[ ]*")).toMatch(/can never match a tool name/);
    expect(toolPatternProblem("Bash[")).toMatch(/can never match a tool name/);
    expect(toolPatternProblem("a".repeat(201))).toMatch(/at most 200/);
  });

  it("agent filters are all or known agents, written as the hook reads them", () => {
    expect(parseAgentFilter("all")).toEqual({ ok: true, value: "all" });
    expect(parseAgentFilter(" Gemini , claude,gemini")).toEqual({ ok: true, value: "gemini,claude" });
    expect(parseAgentFilter("aider")).toMatchObject({ ok: false, message: expect.stringContaining('"aider" is not one') });
    expect(parseAgentFilter("")).toMatchObject({ ok: false });
  });
});
