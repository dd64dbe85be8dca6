/** Ending an open session: closing it (its agent is asked to exit) or killing it (stopped at once, after a confirmation). */
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import type { Session } from "../types";
import { useAction } from "./controls";

export const isOpen = (s: Session) => s.status === "starting" || s.status === "running";

export function SessionControls({ session, onChanged }: { session: Session; onChanged: () => void }) {
  const canWrite = useCanWrite();
  const { run, busy, problem } = useAction();
  if (!canWrite || !isOpen(session)) return null;
  const end = (key: "close" | "kill") =>
    run(key, async () => {
      await ok(
        hub.DELETE("/api/v1/projects/{id}/sessions/{sid}", {
          params: { path: { id: session.project_id, sid: session.id }, query: key === "kill" ? { mode: "kill" } : {} },
        }),
      );
      onChanged();
    });
  return (
    <span class="session-controls">
      <span class="action">
        <button type="button" disabled={busy !== null} aria-label={`Close ${session.name}`} onClick={() => void end("close")}>
          Close
        </button>
        {problem("close")}
      </span>
      <span class="action">
        <button
          type="button"
          class="danger"
          disabled={busy !== null}
          aria-label={`Kill ${session.name}`}
          onClick={() => confirm(`Kill ${session.name}? Its agent is stopped at once, without finishing what it is doing.`) && void end("kill")}
        >
          Kill
        </button>
        {problem("kill")}
      </span>
    </span>
  );
}

/** A session's status as a badge (with how it ended, when it did). */
export function SessionStatusBadge({ session }: { session: Pick<Session, "status" | "exit_code" | "error"> }) {
  const ended = session.status === "closed" && session.exit_code !== null ? ` (exit ${session.exit_code})` : "";
  return (
    <span class={`status status-${session.status}`} data-status={session.status} title={session.error ?? undefined}>
      {session.status}
      {ended}
    </span>
  );
}

/** What the daemon did with the agent's MCP configuration, as it reported on the session's start. */
const MCP: Record<NonNullable<Session["mcp_status"]>, { label: string; tone: "ok" | "warn" | "off"; detail: string }> = {
  written: { label: "configured", tone: "ok", detail: "The daemon wrote the agent's MCP configuration into the working directory" },
  merged: { label: "configured", tone: "ok", detail: "The daemon added its entry to the MCP configuration already in the working directory" },
  workspace_readonly: {
    label: "workspace read-only",
    tone: "warn",
    detail: "The daemon could not write the MCP configuration: the working directory is read-only",
  },
  unsupported: { label: "unsupported", tone: "off", detail: "The daemon has no MCP configuration for this agent" },
  skipped: { label: "skipped", tone: "off", detail: "The daemon had no working directory to configure" },
};

/** The session's MCP status as a badge, once its daemon has reported it. */
export function McpStatusBadge({ status }: { status: Session["mcp_status"] }) {
  if (status === null) return null;
  const mcp = MCP[status];
  return (
    <span class={`badge mcp mcp-${mcp.tone}`} data-mcp-status={status} title={mcp.detail}>
      MCP: {mcp.label}
    </span>
  );
}
