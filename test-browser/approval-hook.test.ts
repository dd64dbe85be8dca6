/**
 * The official daemon's PreToolUse hook (fixtures/orchestratia-pretooluse.sh, unmodified), run for real with the
 * rules file the hub serves: rules made through the API, fetched as the server the way hub.py's
 * `_refresh_rules_cache` does and written where the hook reads them; then Claude, Codex and Gemini tool calls, each
 * decided on stdout and by exit code, and logged to the file the daemon posts from.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminToken, call, hub, hubAs, ok } from "./driver";

const HOOK = path.join(import.meta.dirname, "fixtures/orchestratia-pretooluse.sh");
let dir: string;
let projectId: string;
let sessionId: string;
let apiKey: string;
let admin: string;
const rules: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "hook-"));
  admin = await adminToken();
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Hooked" } }), 201)).id;
  const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: { project_ids: [projectId] } }), 201);
  const reg = await ok(
    hubAs().POST("/api/v1/servers/register", {
      body: { name: "hooked", hostname: "hooked.internal", os: "linux", repos: {}, registration_token: token, machine_id: "hooked" },
    }),
    201,
  );
  apiKey = reg.api_key;
  sessionId = (await ok(hubAs({ apiKey }).POST("/api/v1/server/sessions", { body: { name: "hooked-worker", project_id: projectId } }), 201)).id;
  const made = [
    { key: "noWeb", name: "no web", tool_pattern: "WebFetch", action: "deny", scope_type: "tenant" },
    { key: "noForce", name: "never force", tool_pattern: "Bash", param_pattern: "*--force*", action: "deny", scope_type: "tenant" },
    {
      key: "npmTest",
      name: "npm tests",
      tool_pattern: "Bash",
      param_pattern: "npm test*",
      action: "allow",
      scope_type: "project",
      scope_id: projectId,
      agent_filter: "claude",
    },
    {
      key: "noRm",
      name: "no rm",
      tool_pattern: "shell",
      param_pattern: "rm -rf *",
      action: "deny",
      scope_type: "server",
      scope_id: reg.id,
      agent_filter: "codex",
    },
    { key: "geminiShell", name: "gemini shell", tool_pattern: "run_shell_*", action: "allow", scope_type: "tenant", agent_filter: "gemini" },
    { key: "off", name: "switched off", tool_pattern: "*", action: "deny", scope_type: "tenant", is_active: false },
  ];
  for (const { key, ...rule } of made) rules[key] = (await call("/api/v1/approval-rules", { token: admin, body: rule }, 201)).id;
  // What hub.py's _refresh_rules_cache writes: the answer, as is, but for the tenant rules other test files made on this
  // shared hub, which reach this server too and would decide some of these calls first.
  const served: { id: string }[] = await call("/api/v1/server/approval-rules", { apiKey });
  const ours = new Set(Object.values(rules));
  writeFileSync(path.join(dir, "orchestratia-rules.json"), JSON.stringify(served.filter((r) => ours.has(r.id))));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the hook on one tool call (no single quotes: the hook embeds its input in a python string). */
function hook(toolName: string, toolInput: Record<string, string>) {
  const input = JSON.stringify({ session_id: "agent-own-id", hook_event_name: "PreToolUse", tool_name: toolName, tool_input: toolInput });
  expect(input).not.toContain("'");
  const run = spawnSync("bash", [HOOK], {
    input,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      TMPDIR: dir,
      ORCHESTRATIA_HUB_URL: hub().url,
      ORCHESTRATIA_SESSION_ID: sessionId,
      ORCHESTRATIA_PROJECT_ID: projectId,
    },
  });
  const lines = readFileSync(path.join(dir, "orchestratia-permlog.jsonl"), "utf8").trim().split("\n");
  return { code: run.status, decision: run.stdout ? JSON.parse(run.stdout).hookSpecificOutput : null, logged: JSON.parse(lines.at(-1)!) };
}

describe("the daemon's hook with the rules the hub serves", () => {
  it("gets only the active rules, deny first", async () => {
    const served = JSON.parse(readFileSync(path.join(dir, "orchestratia-rules.json"), "utf8")) as { id: string; action: string }[];
    const ours = served.filter((r) => Object.values(rules).includes(r.id)).map((r) => r.id);
    expect(ours).toEqual([rules.noRm, rules.noWeb, rules.noForce, rules.npmTest, rules.geminiShell]);
  });

  it("lets Claude run npm test and blocks WebFetch", () => {
    const test = hook("Bash", { command: "npm test" });
    expect(test.code).toBe(0);
    expect(test.decision).toEqual({ hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "Auto-approved by rule: npm tests" });
    expect(test.logged).toMatchObject({
      session_id: sessionId,
      project_id: projectId,
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      decision: "allowed",
      matched_rule_id: rules.npmTest,
      agent_name: "claude",
    });

    const web = hook("WebFetch", { url: "https://example.com/", prompt: "read it" });
    expect(web.code).toBe(2);
    expect(web.decision).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "Blocked by rule: no web" });
    expect(web.logged).toMatchObject({ tool_name: "WebFetch", decision: "denied", matched_rule_id: rules.noWeb, agent_name: "claude" });
  });

  it("applies a tenant deny before a project's allow, and asks when nothing matches", () => {
    const forced = hook("Bash", { command: "npm test --force" });
    expect([forced.code, forced.decision?.permissionDecision, forced.logged.matched_rule_id]).toEqual([2, "deny", rules.noForce]);
    const install = hook("Bash", { command: "npm install" });
    expect([install.code, install.decision]).toEqual([0, null]);
    expect(install.logged).toMatchObject({ decision: "asked", matched_rule_id: null, reason: null, agent_name: "claude" });
  });

  it("blocks Codex's rm -rf through its server's rule, and asks for the rest", () => {
    const rm = hook("shell", { command: "rm -rf build" });
    expect(rm.code).toBe(2);
    expect(rm.decision).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "Blocked by rule: no rm" });
    expect(rm.logged).toMatchObject({ tool_name: "shell", decision: "denied", matched_rule_id: rules.noRm, agent_name: "codex" });
    const ls = hook("shell", { command: "ls" });
    expect([ls.code, ls.logged.decision, ls.logged.agent_name]).toEqual([0, "asked", "codex"]);
  });

  it("lets Gemini run shell commands by a rule for Gemini alone", () => {
    const gemini = hook("run_shell_command", { command: "ls -la" });
    expect(gemini.code).toBe(0);
    expect(gemini.decision).toMatchObject({ permissionDecision: "allow", permissionDecisionReason: "Auto-approved by rule: gemini shell" });
    expect(gemini.logged).toMatchObject({ tool_name: "run_shell_command", decision: "allowed", matched_rule_id: rules.geminiShell, agent_name: "gemini" });
  });

  it("posts what it logged as the daemon does, and each call lands in the project's log under its session and task", async () => {
    // The session works on a task, so the calls it logs now are filed under it.
    const task = await call("/api/v1/server/tasks", { apiKey, body: { title: "Hooked work", project_id: projectId } }, 201);
    await call(`/api/v1/server/tasks/${task.id}/assign`, { apiKey, body: { session_name: "hooked-worker" } });
    const before = hook("Bash", { command: "npm test -- --watch=false" });
    expect(before.logged.decision).toBe("allowed");
    // hub.py's permlog_flush_loop: every line of the file, as parsed JSON, in one post.
    const lines = readFileSync(path.join(dir, "orchestratia-permlog.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const posted = await call("/api/v1/server/permissions/log", { apiKey, body: { entries: lines } }, 201);
    expect(posted).toMatchObject({ accepted: lines.length, dropped: 0, invalid: 0 });
    const { entries } = await call(`/api/v1/projects/${projectId}/permission-log?limit=500`, { token: admin });
    expect(entries).toHaveLength(lines.length);
    // Newest first; the hook's second-precision times tie, so compare as sets of what each call was.
    const seen = (e: { tool_name: string; decision: string; matched_rule_id: string | null; agent_name: string; session_id: string }) =>
      [e.tool_name, e.decision, e.matched_rule_id, e.agent_name, e.session_id].join(" ");
    expect(entries.map(seen).sort()).toEqual(lines.map(seen).sort());
    const last = entries.find((e: { tool_input: { command?: string } }) => e.tool_input.command === "npm test -- --watch=false");
    expect(last).toMatchObject({ session_id: sessionId, task_id: task.id, decision: "allowed", matched_rule_id: rules.npmTest });
  });
});
