/**
 * The coding agents the official daemon knows, by the names it reads in `session_start`'s `agent_type`
 * (agent_registry.py `AgentType`). The daemon writes each one's MCP configuration where that agent reads it and takes
 * any other name for Claude Code, so the hub sends only these; the short names people used to send are mapped.
 */
export const AGENT_TYPES = ["claude_code", "codex_cli", "gemini_cli", "aider", "cursor"] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

export const AGENT_TYPE_ALIASES = { claude: "claude_code", codex: "codex_cli", gemini: "gemini_cli" } as const satisfies Record<string, AgentType>;

/** The daemon's name for an agent type given by either name. */
export const daemonAgentType = (name: AgentType | keyof typeof AGENT_TYPE_ALIASES): AgentType =>
  name in AGENT_TYPE_ALIASES ? AGENT_TYPE_ALIASES[name as keyof typeof AGENT_TYPE_ALIASES] : (name as AgentType);
