/**
 * Approval rules as the daemon's PreToolUse hook takes them: the first active rule that matches a tool call decides
 * it, so the hub hands each server its rules in that order (deny before allow; then server, project, tenant: the
 * narrower scope first; then oldest first), and only the rules that apply to it.
 */
import { matchesSomeOf } from "./fnmatch";

export type ApprovalAction = "allow" | "deny";
export type ApprovalScope = "tenant" | "project" | "server";

export interface RuleOrderKey {
  id: string;
  action: ApprovalAction;
  scopeType: ApprovalScope;
  scopeId: string | null;
  createdAt: string;
}

const SCOPE_RANK: Record<ApprovalScope, number> = { server: 0, project: 1, tenant: 2 };

/** The order the hook applies rules in; stable (created_at, then id) among equals. */
export function compareRules(a: RuleOrderKey, b: RuleOrderKey): number {
  return (
    Number(a.action === "allow") - Number(b.action === "allow") ||
    SCOPE_RANK[a.scopeType] - SCOPE_RANK[b.scopeType] ||
    (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export const inHookOrder = <R extends RuleOrderKey>(rules: readonly R[]): R[] => [...rules].sort(compareRules);

/** A server as rules see it: its id and the projects it serves (null: every project). */
export interface RuleServer {
  id: string;
  projectIds: readonly string[] | null;
}

/** Whether a rule reaches a server: tenant rules all, server rules their own, project rules the servers serving that project. */
export function appliesTo(rule: Pick<RuleOrderKey, "scopeType" | "scopeId">, server: RuleServer): boolean {
  if (rule.scopeType === "tenant") return true;
  if (rule.scopeType === "server") return rule.scopeId === server.id;
  return rule.scopeId !== null && (server.projectIds === null || server.projectIds.includes(rule.scopeId));
}

/** The active rules a server's daemon gets, in the hook's order. */
export const rulesForServer = <R extends RuleOrderKey & { isActive: boolean }>(rules: readonly R[], server: RuleServer): R[] =>
  inHookOrder(rules.filter((r) => r.isActive && appliesTo(r, server)));

/**
 * The characters tool names are made of: the agents' own (`Bash`, `WebFetch`, `run_shell_command`, `shell`) and MCP
 * tools (`mcp__github__create_issue`, server names with `-` or `.`).
 */
export const TOOL_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:";
const GLOB_CHARS = "*?[]!";
export const MAX_TOOL_PATTERN = 200;
export const MAX_PARAM_PATTERN = 1000;

/** Why a tool pattern can never match a tool name, or null when it can. */
export function toolPatternProblem(pattern: string): string | null {
  if (pattern.trim() === "") return "must not be empty: use * for every tool";
  if (pattern.length > MAX_TOOL_PATTERN) return `must be at most ${MAX_TOOL_PATTERN} characters`;
  const odd = [...new Set(Array.from(pattern))].filter((ch) => !TOOL_NAME_CHARS.includes(ch) && !GLOB_CHARS.includes(ch));
  if (odd.length > 0) return `can never match a tool name: tool names have no ${odd.map((ch) => JSON.stringify(ch)).join(", ")}`;
  if (!matchesSomeOf(pattern, TOOL_NAME_CHARS)) return "can never match a tool name: one of its [sets] (or a literal [) takes no letter, digit, _, -, . or :";
  return null;
}

export const AGENT_NAMES = ["claude", "codex", "gemini"] as const;

/** An agent filter as the hook reads it (`all`, or a comma list of agent names), or why it is not one. */
export function parseAgentFilter(value: string): { ok: true; value: string } | { ok: false; message: string } {
  const names = value.split(",").map((n) => n.trim().toLowerCase());
  if (names.length === 1 && names[0] === "all") return { ok: true, value: "all" };
  const unknown = names.filter((n) => !(AGENT_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    const named = unknown.map((n) => (n === "" ? "an empty name" : JSON.stringify(n))).join(", ");
    return { ok: false, message: `must be "all" or a comma list of ${AGENT_NAMES.join(", ")}: ${named} is not one` };
  }
  return { ok: true, value: [...new Set(names)].join(",") };
}
