/**
 * The Connect page's MCP clients: the hub's endpoint and, for Claude Code, Codex and Gemini CLI, the lines that add
 * it; "Make a token for this" makes a personal access token for this project and puts it in that client's lines.
 */
import { useState } from "preact/hooks";
import { mcpClientLines, type McpClientId, type McpClientLines } from "../connect-lines";
import { linkProps } from "../router";
import type { IssuedPersonalToken } from "../types";
import { useAction } from "./controls";
import { CopyLine } from "./copy";
import { lifetime, makeToken } from "./token-form";

const TOKEN_DAYS = 90;

export function McpConnect({ projectId, projectName }: { projectId: string; projectName?: string }) {
  const url = `${location.origin}/mcp`;
  const [scope, setScope] = useState<"read" | "write">("write");
  const [tokens, setTokens] = useState<Partial<Record<McpClientId, IssuedPersonalToken>>>({});
  const { run, busy, problem } = useAction();
  const make = (client: McpClientLines) =>
    run(client.id, async () => {
      const name = `${client.title}: ${projectName ?? "project"}`;
      const issued = await makeToken({ name, scope, project_ids: [projectId], expires_in_seconds: lifetime(TOKEN_DAYS) });
      setTokens((made) => ({ ...made, [client.id]: issued }));
    });

  return (
    <section class="panel connect-mcp" aria-labelledby="connect-mcp-title">
      <h2 id="connect-mcp-title">MCP clients</h2>
      <p class="muted">
        A coding agent reaches the hub's tools (projects, tasks, assigning, plans, answers) over MCP, as you, with a personal access token. A token made here
        reaches only this project for {TOKEN_DAYS} days; your tokens are listed, and revoked, on your <a {...linkProps("/account")}>account page</a>.
      </p>
      <CopyLine label="MCP endpoint (Streamable HTTP)" name="mcp-url" value={url} />
      <label class="token-scope">
        Tokens made here may
        <select name="connect-token-scope" value={scope} onChange={(e) => setScope(e.currentTarget.value as "read" | "write")}>
          <option value="write">work as you</option>
          <option value="read">only read</option>
        </select>
      </label>
      {mcpClientLines(url).map((client) => {
        const issued = tokens[client.id];
        const filled = issued ? mcpClientLines(url, issued.token).find((c) => c.id === client.id)! : client;
        return (
          <div class="client" data-client={client.id} key={client.id}>
            <h3>{client.title}</h3>
            {filled.lines.map((line, i) => (
              <CopyLine key={i} label={line.label} name={`${client.id}-line-${i}`} value={line.text} />
            ))}
            {client.note && <p class="muted small">{client.note}</p>}
            {issued ? (
              <p class="shown-once" role="status">
                <strong>Shown once:</strong> the token “{issued.name}” is in these lines only; copy them now.
              </p>
            ) : (
              <span class="action">
                <button type="button" class="secondary" disabled={busy !== null} onClick={() => void make(client)}>
                  Make a token for this
                </button>
                {problem(client.id)}
              </span>
            )}
          </div>
        );
      })}
    </section>
  );
}
