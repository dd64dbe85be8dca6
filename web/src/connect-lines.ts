/**
 * The lines a person pastes to connect something to the hub, each in its tool's own syntax: MCP clients over
 * Streamable HTTP with a personal access token, and the official daemon (`orchestratia-agent`).
 */

/** The name the hub's MCP server is added under in each client. */
export const MCP_NAME = "orchestratia";
/** Codex takes a bearer token only from an environment variable (`--bearer-token-env-var`), never inline. */
export const TOKEN_VARIABLE = "ORCHESTRATIA_TOKEN";
export const TOKEN_PLACEHOLDER = "YOUR_TOKEN";
export const REGISTRATION_PLACEHOLDER = "YOUR_REGISTRATION_TOKEN";
export const DAEMON_PACKAGE = "git+https://github.com/kumarimlab/orchestratia-agent.git";
/** Where the venv install puts the daemon. */
const VENV = "~/.orchestratia-agent";

export type McpClientId = "claude" | "codex" | "gemini";

export interface McpClientLines {
  id: McpClientId;
  title: string;
  /** In order: each its own copyable line. */
  lines: { label: string; text: string }[];
  note?: string;
}

export function mcpClientLines(mcpUrl: string, token = TOKEN_PLACEHOLDER): McpClientLines[] {
  const bearer = `"Authorization: Bearer ${token}"`;
  return [
    {
      id: "claude",
      title: "Claude Code",
      lines: [{ label: "Run", text: `claude mcp add --transport http ${MCP_NAME} ${mcpUrl} --header ${bearer}` }],
    },
    {
      id: "codex",
      title: "Codex",
      lines: [
        { label: "Put in your shell's profile (~/.bashrc, ~/.zshrc)", text: `export ${TOKEN_VARIABLE}=${token}` },
        { label: "Run", text: `codex mcp add ${MCP_NAME} --url ${mcpUrl} --bearer-token-env-var ${TOKEN_VARIABLE}` },
      ],
      note: "Codex reads the token from the variable whenever it starts, so the variable must be set in the shell that runs it.",
    },
    {
      id: "gemini",
      title: "Gemini CLI",
      lines: [{ label: "Run", text: `gemini mcp add --transport http --scope user --header ${bearer} ${MCP_NAME} ${mcpUrl}` }],
    },
  ];
}

/** The daemon, installed in a virtual environment or with pipx, registered once with a registration token. */
export function daemonLines(registrationToken = REGISTRATION_PLACEHOLDER) {
  return {
    venv: {
      install: `python3 -m venv ${VENV} && ${VENV}/bin/pip install ${DAEMON_PACKAGE} && ${VENV}/bin/orchestratia-agent --register ${registrationToken}`,
      start: `${VENV}/bin/orchestratia-agent`,
    },
    pipx: {
      install: `pipx install ${DAEMON_PACKAGE} && orchestratia-agent --register ${registrationToken}`,
      start: "orchestratia-agent",
    },
    tmux: { debian: "sudo apt install tmux python3-venv", macos: "brew install tmux" },
  };
}
