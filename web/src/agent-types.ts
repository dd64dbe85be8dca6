/**
 * The coding agents the official daemon knows, by the names the hub sends it
 * (`agent_type`), as people read them; and, for the orchestrator role, the file
 * the daemon writes that role's instructions into (governance_hook.py: by the
 * agent's registry entry; none for Aider and Cursor).
 */
import type { paths } from "../../client";
import type { Session } from "./types";

type StartSession = NonNullable<paths["/api/v1/projects/{id}/sessions"]["post"]["requestBody"]>["content"]["application/json"];
/** The names the hub takes, the daemon's and the short ones it maps: only the daemon's are offered. */
type AgentType = Exclude<NonNullable<StartSession["agent_type"]>, "claude" | "codex" | "gemini">;

export interface Agent {
  type: AgentType;
  label: string;
  promptFile: string | null;
}

export const AGENTS: readonly Agent[] = [
  { type: "claude_code", label: "Claude Code", promptFile: "CLAUDE.md" },
  { type: "codex_cli", label: "Codex CLI", promptFile: "AGENTS.md" },
  { type: "gemini_cli", label: "Gemini CLI", promptFile: "GEMINI.md" },
  { type: "aider", label: "Aider", promptFile: null },
  { type: "cursor", label: "Cursor", promptFile: null },
];

/** Left out, the daemon detects the agent from the working directory, and writes an orchestrator's instructions to CLAUDE.md. */
export const DETECTED: Omit<Agent, "type"> = { label: "Let the daemon detect it", promptFile: "CLAUDE.md" };

/** The agent of a choice of the start form ("" for the daemon to detect it). */
export const agentChosen = (type: AgentType | ""): Omit<Agent, "type"> => AGENTS.find((a) => a.type === type) ?? DETECTED;

/** A session's agent as people read it (sessions started before the daemon's names were used keep what was sent). */
export const agentLabel = (type: Session["agent_type"]) => (type === null ? "detected by the daemon" : (AGENTS.find((a) => a.type === type)?.label ?? type));
