/**
 * How the daemon's PreToolUse hook (agent-skills/hooks/orchestratia-pretooluse.sh) matches one rule against one tool
 * call, so that a rule's effect can be previewed against the logged calls exactly as the hook would have decided them.
 */
import { fnmatch } from "./fnmatch";
import { inHookOrder, type ApprovalAction, type ApprovalScope, type RuleOrderKey } from "./approval-rules";

/** Logged decisions: the hook writes `allowed` for an allow rule, `denied` for a deny rule, `asked` when none matched. */
export type LoggedDecision = "allowed" | "denied" | "asked";

const COMMAND_TOOLS = new Set(["Bash", "run_shell_command", "shell"]);
const FILE_TOOLS = new Set(["Edit", "Write", "Read", "MultiEdit", "write_file", "read_file", "replace", "create_file"]);
const URL_TOOLS = new Set(["WebFetch", "web_fetch"]);
const SEARCH_TOOLS = new Set(["Glob", "Grep", "grep_search", "glob_search"]);

/** Python's truthiness of a JSON value, as `x or y` and `if x` read it. */
const truthy = (v: unknown) =>
  !(v === undefined || v === null || v === false || v === 0 || v === "" || (Array.isArray(v) && v.length === 0)) &&
  !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

const text = (v: unknown) => (typeof v === "string" ? v : "");

/**
 * The parameter the hook matches `param_pattern` against for this tool: the command, the file path (or path), the
 * URL, the search pattern, the first 200 characters of an Agent's prompt; "" for any other tool (or a value that is
 * not a string).
 */
export function mainParameter(toolName: string, input: Record<string, unknown>): string {
  if (COMMAND_TOOLS.has(toolName)) return text(input.command);
  if (FILE_TOOLS.has(toolName)) return text(truthy(input.file_path) ? input.file_path : input.path);
  if (URL_TOOLS.has(toolName)) return text(input.url);
  if (SEARCH_TOOLS.has(toolName)) return text(input.pattern);
  if (toolName === "Agent") return truthy(input.prompt) ? Array.from(text(input.prompt)).slice(0, 200).join("") : "";
  return "";
}

export interface MatchingRule {
  toolPattern: string;
  paramPattern: string | null;
  action: ApprovalAction;
  scopeType: ApprovalScope;
  scopeId: string | null;
  agentFilter: string;
}

export interface LoggedCall {
  projectId: string;
  /** The server whose daemon posted the call: a server rule reaches that server's hook only. */
  serverId: string;
  toolName: string;
  toolInput: Record<string, unknown>;
  agentName: string | null;
}

/**
 * Whether the hook would apply the rule to the call: the tool pattern matches the name; a parameter pattern matches
 * the main parameter, or the call has none; a project rule is the call's project; the agent filter names the agent,
 * or the call has no agent name.
 */
export function ruleMatches(rule: MatchingRule, call: LoggedCall): boolean {
  if (rule.toolPattern !== "*" && !fnmatch(call.toolName, rule.toolPattern)) return false;
  const param = mainParameter(call.toolName, call.toolInput);
  if (rule.paramPattern && param && !fnmatch(param, rule.paramPattern)) return false;
  if (rule.scopeType === "project" && rule.scopeId && rule.scopeId !== call.projectId) return false;
  if (rule.scopeType === "server" && rule.scopeId && rule.scopeId !== call.serverId) return false;
  if (rule.agentFilter !== "all" && call.agentName) {
    if (!rule.agentFilter.split(",").some((a) => a.trim() === call.agentName)) return false;
  }
  return true;
}

/** The decision the hook logs when this rule decides a call. */
export const decisionOf = (action: ApprovalAction): LoggedDecision => (action === "allow" ? "allowed" : "denied");

export interface LoggedEntry {
  id: string;
  projectId: string;
  serverId: string;
  toolName: string;
  /** The JSON text the log keeps. */
  toolInput: string;
  decision: LoggedDecision;
  agentName: string | null;
  createdAt: string;
}

export type OrderedRule = MatchingRule & RuleOrderKey;

/** What the hook decides of a call under rules in its order: the first that matches, or `asked` when none does. */
export function decide(rules: readonly OrderedRule[], call: LoggedCall): { decision: LoggedDecision; ruleId: string | null } {
  const rule = rules.find((r) => ruleMatches(r, call));
  return rule ? { decision: decisionOf(rule.action), ruleId: rule.id } : { decision: "asked", ruleId: null };
}

/**
 * What adding `candidate` to the active rules (in place of the rule of its id, when it is an edit) would change of the
 * entries (newest first), each decided as the hook decides it: by the first rule in the hook's order that matches.
 * `matched` counts the entries the candidate matches, `decided` those it would decide (no rule before it matches
 * them), `wouldChange` those decided otherwise than the active rules decide them now; the first `samples` matched
 * entries are described.
 */
export function previewAmong(candidate: OrderedRule, active: readonly OrderedRule[], entries: readonly LoggedEntry[], samples: number) {
  const now = inHookOrder(active);
  const withRule = inHookOrder([...active.filter((r) => r.id !== candidate.id), candidate]);
  let matched = 0;
  let decided = 0;
  let wouldChange = 0;
  const shown: (LoggedEntry & { parameter: string; now: LoggedDecision; withRule: LoggedDecision; decidedByRule: boolean })[] = [];
  for (const entry of entries) {
    const call = { ...entry, toolInput: JSON.parse(entry.toolInput) as Record<string, unknown> };
    const after = decide(withRule, call);
    const before = decide(now, call);
    if (after.decision !== before.decision) wouldChange++;
    if (!ruleMatches(candidate, call)) continue;
    matched++;
    if (after.ruleId === candidate.id) decided++;
    if (shown.length < samples)
      shown.push({
        ...entry,
        parameter: mainParameter(entry.toolName, call.toolInput),
        now: before.decision,
        withRule: after.decision,
        decidedByRule: after.ruleId === candidate.id,
      });
  }
  return { matched, decided, wouldChange, samples: shown };
}
