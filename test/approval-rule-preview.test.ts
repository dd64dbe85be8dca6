/**
 * A rule's preview: the hook's matching (its main parameter per tool, fnmatch, the agent filter) as a pure function,
 * and POST /api/v1/approval-rules/preview over the permission log a fake daemon posted as hub.py does, for rules of
 * each scope, never counting entries of projects the caller cannot see.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { mainParameter, previewAmong, ruleMatches, type LoggedEntry, type MatchingRule, type OrderedRule } from "../src/domain/hook-match";
import { hookLines, hookTime, postPermissionLog, type HookLogEntry } from "./fake-daemon";
import { addMember, bootstrapAdmin, call, createProject, createUser, expectProblem, registerAgent } from "./helpers";
import { expectOk } from "./task-world";

describe("the hook's matching", () => {
  it("takes the parameter the hook takes for each tool name", () => {
    expect(mainParameter("Bash", { command: "npm test", description: "x" })).toBe("npm test");
    expect(mainParameter("run_shell_command", { command: "ls" })).toBe("ls");
    expect(mainParameter("shell", { command: "pwd" })).toBe("pwd");
    expect(mainParameter("Edit", { file_path: "/a.ts", path: "/b.ts" })).toBe("/a.ts");
    expect(mainParameter("write_file", { file_path: "", path: "/b.ts" })).toBe("/b.ts");
    expect(mainParameter("WebFetch", { url: "https://x.test/" })).toBe("https://x.test/");
    expect(mainParameter("web_fetch", { url: "https://y.test/" })).toBe("https://y.test/");
    expect(mainParameter("grep_search", { pattern: "TODO" })).toBe("TODO");
    expect(mainParameter("Agent", { prompt: "é".repeat(300) })).toBe("é".repeat(200));
    expect(mainParameter("Skill", { command: "npm test" })).toBe("");
    expect(mainParameter("Bash", { command: 42 })).toBe("");
  });

  const rule = (r: Partial<MatchingRule>): MatchingRule => ({
    toolPattern: "Bash",
    paramPattern: null,
    action: "allow",
    scopeType: "tenant",
    scopeId: null,
    agentFilter: "all",
    ...r,
  });
  const call_ = (toolName: string, toolInput: Record<string, unknown>, agentName: string | null = "claude", projectId = "p1", serverId = "s1") => ({
    projectId,
    serverId,
    toolName,
    toolInput,
    agentName,
  });

  it("matches the tool name and the parameter by fnmatch, and a call without a parameter whatever the pattern", () => {
    expect(ruleMatches(rule({ paramPattern: "npm test*" }), call_("Bash", { command: "npm test -- --run" }))).toBe(true);
    expect(ruleMatches(rule({ paramPattern: "npm test*" }), call_("Bash", { command: "rm -rf /" }))).toBe(false);
    expect(ruleMatches(rule({ paramPattern: "npm test*" }), call_("Bash", {}))).toBe(true);
    expect(ruleMatches(rule({ toolPattern: "mcp__*" }), call_("mcp__github__create_issue", {}))).toBe(true);
    expect(ruleMatches(rule({ toolPattern: "Bash" }), call_("bash", { command: "ls" }))).toBe(false);
    expect(ruleMatches(rule({ toolPattern: "*", paramPattern: "https://[!x]*" }), call_("WebFetch", { url: "https://x.test/" }))).toBe(false);
  });

  it("applies a project rule to its project only, and the agent filter to calls that name their agent", () => {
    expect(ruleMatches(rule({ scopeType: "project", scopeId: "p1" }), call_("Bash", {}))).toBe(true);
    expect(ruleMatches(rule({ scopeType: "project", scopeId: "p2" }), call_("Bash", {}))).toBe(false);
    expect(ruleMatches(rule({ scopeType: "server", scopeId: "s1" }), call_("Bash", {}))).toBe(true);
    expect(ruleMatches(rule({ scopeType: "server", scopeId: "s2" }), call_("Bash", {}))).toBe(false);
    expect(ruleMatches(rule({ agentFilter: "codex,gemini" }), call_("Bash", {}, "claude"))).toBe(false);
    expect(ruleMatches(rule({ agentFilter: "codex,gemini" }), call_("Bash", {}, "gemini"))).toBe(true);
    expect(ruleMatches(rule({ agentFilter: "codex" }), call_("Bash", {}, null))).toBe(true);
  });
  const ordered = (id: string, r: Partial<MatchingRule>, createdAt = "2026-01-01T00:00:00.000Z"): OrderedRule => ({ ...rule(r), id, createdAt });
  const logged = (n: number, command: string, decision: LoggedEntry["decision"]): LoggedEntry => ({
    id: `e${n}`,
    projectId: "p1",
    serverId: "s1",
    toolName: "Bash",
    toolInput: JSON.stringify({ command }),
    decision,
    agentName: "claude",
    createdAt: `2026-01-01T00:00:0${n}.000Z`,
  });
  const entries = [logged(3, "npm test", "asked"), logged(2, "ls", "asked"), logged(1, "npm test x", "denied"), logged(0, "npm test y", "denied")];

  it("counts the entries a rule matches, decides and would decide otherwise than now, and describes the first few", () => {
    const p = previewAmong(ordered("new", { paramPattern: "npm test*", action: "deny" }), [], entries, 2);
    expect([p.matched, p.decided, p.wouldChange]).toEqual([3, 3, 3]);
    expect(p.samples.map((s) => [s.id, s.parameter, s.decision, s.now, s.withRule, s.decidedByRule])).toEqual([
      ["e3", "npm test", "asked", "asked", "denied", true],
      ["e1", "npm test x", "denied", "asked", "denied", true],
    ]);
  });

  it("puts the rule in the hook's order: a deny before it decides first, and an allow after a deny never decides what the deny matches", () => {
    const denyX = ordered("deny-x", { paramPattern: "npm test x", action: "deny" });
    const allow = previewAmong(ordered("new", { paramPattern: "npm test*" }), [denyX], entries, 10);
    expect([allow.matched, allow.decided, allow.wouldChange]).toEqual([3, 2, 2]);
    expect(allow.samples.map((s) => [s.id, s.now, s.withRule, s.decidedByRule])).toEqual([
      ["e3", "asked", "allowed", true],
      ["e1", "denied", "denied", false],
      ["e0", "asked", "allowed", true],
    ]);
    // Among rules of one action and scope the older decides first.
    const older = ordered("older", { paramPattern: "npm*", action: "deny" }, "2025-01-01T00:00:00.000Z");
    expect(previewAmong(ordered("new", { paramPattern: "npm test*", action: "deny" }), [older], entries, 0)).toMatchObject({
      matched: 3,
      decided: 0,
      wouldChange: 0,
    });
  });

  it("previews an edit in place of the rule it edits", () => {
    const before = ordered("r1", { paramPattern: "npm test*", action: "deny" });
    const edit = previewAmong(ordered("r1", { paramPattern: "npm test x*", action: "deny" }), [before], entries, 10);
    // e3 and e0 were denied by the rule as it is; edited, it matches only e1.
    expect([edit.matched, edit.decided, edit.wouldChange]).toEqual([1, 1, 2]);
  });
});

const PREVIEW = "/api/v1/approval-rules/preview";

let admin: string;
let projectA: { id: string };
let projectB: { id: string };
let member: Awaited<ReturnType<typeof createUser>>;
let serverA: Awaited<ReturnType<typeof registerAgent>>;
let serverB: Awaited<ReturnType<typeof registerAgent>>;

const hookLine = hookLines();
const entry = (projectId: string, toolName: string, toolInput: Record<string, unknown>, fields: Partial<HookLogEntry> = {}): HookLogEntry =>
  hookLine({ project_id: projectId, tool_name: toolName, tool_input: toolInput, ...fields });

beforeAll(async () => {
  admin = await bootstrapAdmin();
  projectA = await createProject(admin, "Preview A");
  projectB = await createProject(admin, "Preview B");
  member = await createUser(admin, "member");
  await addMember(admin, projectA.id, member.id);
  serverA = await registerAgent(admin, "preview-a", { project_ids: [projectA.id] });
  serverB = await registerAgent(admin, "preview-b", { project_ids: [projectA.id, projectB.id] });
  const a = [
    entry(projectA.id, "Bash", { command: "npm test" }),
    entry(
      projectA.id,
      "Bash",
      { command: "npm test -- --run" },
      { decision: "allowed", matched_rule_id: crypto.randomUUID(), reason: "Auto-approved by rule: x" },
    ),
    entry(projectA.id, "Bash", { command: "rm -rf build" }),
    entry(projectA.id, "Bash", {}, { agent_name: null }),
    entry(projectA.id, "Read", { file_path: "/repo/npm test" }),
    entry(projectA.id, "shell", { command: "npm test" }, { agent_name: "codex" }),
    entry(projectA.id, "Bash", { command: "npm test old" }, { created_at: hookTime(Date.now() - 31 * 86_400_000) }),
  ];
  expect((await postPermissionLog(serverA.apiKey, a)).json.accepted).toBe(a.length);
  const b = [entry(projectB.id, "Bash", { command: "npm test" }), entry(projectA.id, "Bash", { command: "npm test from b" }, { agent_name: "codex" })];
  expect((await postPermissionLog(serverB.apiKey, b)).json.accepted).toBe(b.length);
});

const preview = async (token: string, rule: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  (await expectOk(call(PREVIEW, { token, body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "tenant", ...rule }, ...extra } }))).json;

describe("previewing a rule", () => {
  it("decides a project rule over that project's log of the last 30 days as the hook would, newest first", async () => {
    const p = await preview(member.token, { param_pattern: "npm test*", scope_type: "project", scope_id: projectA.id });
    // A's six recent entries and B's server's entry for A; the 31-day-old one is left out.
    expect(p).toMatchObject({ scanned: 7, matched: 4, decided: 4, would_change: 4, truncated: false });
    expect(p.samples.map((s: any) => [s.parameter, s.decision, s.decision_now, s.decision_under_rule, s.decided_by_rule])).toEqual([
      ["npm test from b", "asked", "asked", "allowed", true],
      ["", "asked", "asked", "allowed", true],
      ["npm test -- --run", "allowed", "asked", "allowed", true],
      ["npm test", "asked", "asked", "allowed", true],
    ]);
    expect(p.samples.every((s: any) => s.project_id === projectA.id && s.tool_name === "Bash")).toBe(true);
  });

  it("applies the agent filter to the entry's agent", async () => {
    const p = await preview(member.token, {
      tool_pattern: "*",
      param_pattern: "npm test*",
      action: "deny",
      scope_type: "project",
      scope_id: projectA.id,
      agent_filter: "codex",
    });
    expect(p.samples.map((s: any) => [s.tool_name, s.parameter, s.decision_under_rule])).toEqual([
      ["Bash", "npm test from b", "denied"],
      ["shell", "npm test", "denied"],
      ["Bash", "", "denied"],
    ]);
    expect(p).toMatchObject({ matched: 3, would_change: 3 });
  });

  it("never counts entries of projects the caller cannot see", async () => {
    expectProblem(
      await call(PREVIEW, { token: member.token, body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "project", scope_id: projectB.id } } }),
      422,
      "VALIDATION_FAILED",
    );
    expectProblem(
      await call(PREVIEW, { token: member.token, body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "tenant" }, project_id: projectB.id } }),
      403,
      "FORBIDDEN",
    );
    const all = await preview(admin, { param_pattern: "npm test*" });
    const ids = new Set(all.samples.map((s: any) => s.project_id));
    expect(ids).toContain(projectB.id);
    const ofA = await preview(admin, { param_pattern: "npm test*" }, { project_id: projectA.id });
    expect(ofA.samples.every((s: any) => s.project_id === projectA.id)).toBe(true);
    expect(ofA.matched).toBe(4);
  });

  it("takes a server rule over the entries its server posted only", async () => {
    const p = await preview(admin, { param_pattern: "npm test*", scope_type: "server", scope_id: serverB.id });
    expect(p.samples.map((s: any) => s.parameter).sort()).toEqual(["npm test", "npm test from b"]);
    expect(p.scanned).toBe(2);
  });

  it("refuses what creating the rule refuses, naming the field", async () => {
    for (const [rule, path] of [
      [{ tool_pattern: "" }, "rule.tool_pattern"],
      [{ tool_pattern: "Bash tool" }, "rule.tool_pattern"],
      [{ param_pattern: "x".repeat(1001) }, "rule.param_pattern"],
      [{ agent_filter: "claude,copilot" }, "rule.agent_filter"],
      [{ action: "maybe" }, "rule.action"],
      [{ scope_type: "project" }, "rule.scope_id"],
      [{ scope_type: "server", scope_id: crypto.randomUUID() }, "rule.scope_id"],
    ] as const) {
      const reply = await call(PREVIEW, { token: admin, body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "tenant", ...rule } } });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: any) => e.path)).toContain(path);
    }
    const viewer = await createUser(admin, "viewer");
    expectProblem(
      await call(PREVIEW, { token: viewer.token, body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "tenant" } } }),
      403,
      "FORBIDDEN",
    );
  });

  it("scans the newest 5000 entries at most, and says so", async () => {
    const projectC = await createProject(admin, "Preview C");
    const server = await registerAgent(admin, "preview-c", { project_ids: [projectC.id] });
    const start = Date.now() - 86_400_000;
    const many = Array.from({ length: 5001 }, (_, i) => entry(projectC.id, "Bash", { command: `npm test ${i}` }, { created_at: hookTime(start + i * 1000) }));
    expect((await postPermissionLog(server.apiKey, many)).json.accepted).toBe(5001);
    const p = await preview(admin, { param_pattern: "npm test *" }, { project_id: projectC.id });
    expect(p).toMatchObject({ scanned: 5000, matched: 5000, would_change: 5000, truncated: true });
    expect(p.samples).toHaveLength(20);
    expect(p.samples[0].parameter).toBe("npm test 5000");
  });

  it("judges the rule among the active ones, and an edit in place of the rule it edits", async () => {
    const create = (rule: Record<string, unknown>) =>
      expectOk(call("/api/v1/approval-rules", { token: admin, body: { name: "preview", scope_type: "project", scope_id: projectA.id, ...rule } }), 201);
    const deny = (await create({ tool_pattern: "Bash", param_pattern: "npm test -- *", action: "deny" })).json;
    const allow = (await create({ tool_pattern: "Bash", param_pattern: "npm test", action: "allow" })).json;
    try {
      const p = await preview(member.token, { param_pattern: "npm test*", scope_type: "project", scope_id: projectA.id });
      // The deny decides "npm test -- --run" and the call without a command (which every parameter pattern matches)
      // first; "npm test" is allowed already by the older allow rule. Only "npm test from b" is the new rule's.
      expect(p).toMatchObject({ matched: 4, decided: 1, would_change: 1 });
      const byParameter = Object.fromEntries(p.samples.map((s: any) => [s.parameter, [s.decision_now, s.decision_under_rule, s.decided_by_rule]]));
      expect(byParameter).toEqual({
        "npm test from b": ["asked", "allowed", true],
        "": ["denied", "denied", false],
        "npm test -- --run": ["denied", "denied", false],
        "npm test": ["allowed", "allowed", false],
      });
      const edit = await preview(member.token, { param_pattern: "rm *", action: "deny", scope_type: "project", scope_id: projectA.id }, { rule_id: deny.id });
      // Edited, the deny takes "rm -rf build" and still the call without a command, and "npm test -- --run" is asked again.
      expect(edit).toMatchObject({ matched: 2, decided: 2, would_change: 2 });
      const unknown = await call(PREVIEW, {
        token: member.token,
        body: { rule: { tool_pattern: "Bash", action: "allow", scope_type: "project", scope_id: projectA.id }, rule_id: crypto.randomUUID() },
      });
      expectProblem(unknown, 422, "VALIDATION_FAILED");
      expect(unknown.json.errors.map((e: any) => e.path)).toEqual(["rule_id"]);
    } finally {
      for (const rule of [deny, allow]) await expectOk(call(`/api/v1/approval-rules/${rule.id}`, { token: admin, method: "DELETE" }), 204);
    }
  });
});
