/** What the dashboard shows of a permission log entry, apart from how: its main parameter and the rule it suggests. */
import type { Schemas } from "../../client";

export type PermissionEntry = Schemas["PermissionLogEntry"];
export type PermissionDecision = PermissionEntry["decision"];
export const DECISIONS: readonly PermissionDecision[] = ["allowed", "denied", "asked"];

const COMMAND_TOOLS = new Set(["Bash", "run_shell_command", "shell"]);
const PATH_TOOLS = new Set(["Edit", "Write", "Read", "MultiEdit", "write_file", "read_file", "replace", "create_file"]);
const URL_TOOLS = new Set(["WebFetch", "web_fetch"]);
const PATTERN_TOOLS = new Set(["Glob", "Grep", "grep_search", "glob_search"]);

const text = (v: unknown) => (typeof v === "string" ? v : "");

/** The parameter the daemon's hook matches a rule's param_pattern against, as it picks it for each tool ("" when none). */
export function mainParameter(toolName: string, input: Record<string, unknown>): string {
  if (COMMAND_TOOLS.has(toolName)) return text(input.command);
  if (PATH_TOOLS.has(toolName)) return text(input.file_path) || text(input.path);
  if (URL_TOOLS.has(toolName)) return text(input.url);
  if (PATTERN_TOOLS.has(toolName)) return text(input.pattern);
  if (toolName === "Agent") return text(input.prompt).slice(0, 200);
  return "";
}

/** The Rules page's create form, prefilled to decide calls like this one in its project (a command and whatever follows it). */
export function ruleFromEntry(projectId: string, entry: PermissionEntry): string {
  const param = mainParameter(entry.tool_name, entry.tool_input);
  const query = new URLSearchParams({ new: "1", tool_pattern: entry.tool_name });
  if (param) query.set("param_pattern", COMMAND_TOOLS.has(entry.tool_name) ? `${param}*` : param);
  query.set("scope_type", "project");
  query.set("scope_id", projectId);
  return `/rules?${query}`;
}

/** The log's filters, as the page's query keeps them. */
export interface LogFilters {
  session_id?: string;
  task_id?: string;
  decision?: PermissionDecision;
  tool?: string;
  before?: string;
}

const FILTER_KEYS = ["session_id", "task_id", "decision", "tool", "before"] as const;

export function filtersOf(search: string): LogFilters {
  const query = new URLSearchParams(search);
  const filters: LogFilters = {};
  for (const key of FILTER_KEYS) {
    const value = query.get(key)?.trim();
    if (!value) continue;
    if (key === "decision") {
      if ((DECISIONS as readonly string[]).includes(value)) filters.decision = value as PermissionDecision;
    } else filters[key] = value;
  }
  return filters;
}

export function searchOf(filters: LogFilters): string {
  const query = new URLSearchParams();
  for (const key of FILTER_KEYS) if (filters[key]) query.set(key, filters[key]!);
  const s = query.toString();
  return s ? `?${s}` : "";
}

/**
 * How an entry names the rule that decided it, said once. The daemon's reason for a rule's decision is "<verb> by rule:
 * <name>" ("Blocked by rule: no force pushes"): that verb leads ("Blocked by rule"), and the reason is not repeated
 * beside it. A reason that says something else (a person's answer, a hook's message) is kept as it is.
 */
export function ruleAndReason(reason: string | null, matched: boolean): { ruleLead: string; reason: string | null } {
  if (!matched) return { ruleLead: "", reason };
  const byRule = reason?.match(/^(.+?) by rule\b:?/i);
  if (byRule) return { ruleLead: `${byRule[1]} by rule`, reason: null };
  return { ruleLead: "rule", reason };
}
