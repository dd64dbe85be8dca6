/**
 * A fake of the official daemon (orchestratia_agent/hub.py and session.py)
 * on its socket: `json.dumps` frames (", " and ": " separators), the auth
 * frame first; it answers `session_start` the way hub.py does
 * (`session_started` with pid, tmux_name and working_dir; with `mcpStatus`,
 * first the `PATCH .../mcp-status` hub.py's `_report_mcp_status` makes when its
 * MCP server is on), and, like a shell in a terminal, echoes what is typed as
 * base64 `session_output`. Every frame the hub sends is in `socket.frames`.
 */
import { expect } from "vitest";
import { call, type Reply } from "./helpers";
import { openSocket, type TestSocket } from "./sockets";

/** Python's json.dumps of a flat object: the daemon's wire format. */
export const pythonJson = (frame: Record<string, unknown>) =>
  `{${Object.entries(frame)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(", ")}}`;

export const b64 = (text: string) => new TextEncoder().encode(text).toBase64();
export const unb64 = (data: string) => new TextDecoder().decode(Uint8Array.fromBase64(data));

export async function connectDaemon(apiKey: string): Promise<TestSocket> {
  const socket = await openSocket("/ws/server");
  socket.send(pythonJson({ type: "auth", api_key: apiKey }));
  return socket;
}

export interface FakeDaemon {
  socket: TestSocket;
  send(frame: Record<string, unknown>): void;
  /** Output of a session, as session.py's reader sends it. */
  output(sessionId: string, text: string | Uint8Array): void;
  /** Bytes typed into each session, decoded. */
  typed(sessionId: string): string;
  /** The hub's answers to the MCP status reports, by session. */
  mcpReports: Map<string, Promise<Reply>>;
}

/** Connects, waits for auth_ok, and plays the daemon: starts sessions it is asked to and echoes input. */
export async function fakeDaemon(apiKey: string, options: { start?: boolean; echo?: boolean; mcpStatus?: string } = {}): Promise<FakeDaemon> {
  const socket = await connectDaemon(apiKey);
  expect(await socket.next()).toMatchObject({ type: "auth_ok" });
  const typed = new Map<string, string>();
  const mcpReports = new Map<string, Promise<Reply>>();
  const send = (frame: Record<string, unknown>) => socket.send(pythonJson(frame));
  const output = (sessionId: string, data: string | Uint8Array) =>
    send({ type: "session_output", session_id: sessionId, data: typeof data === "string" ? b64(data) : data.toBase64() });
  socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    if (frame.type === "session_start" && options.start !== false) {
      if (options.mcpStatus) {
        const report = call(`/api/v1/server/sessions/${frame.session_id}/mcp-status`, { method: "PATCH", apiKey, body: { mcp_status: options.mcpStatus } });
        mcpReports.set(frame.session_id, report);
      }
      send({ type: "session_started", session_id: frame.session_id, pid: 4242, tmux_name: `orc-${frame.session_id.slice(0, 12)}`, working_dir: frame.working_directory ?? "/home/dev" });
    }
    if (frame.type === "session_input") {
      const text = unb64(frame.data);
      typed.set(frame.session_id, (typed.get(frame.session_id) ?? "") + text);
      if (options.echo !== false) output(frame.session_id, text.replace(/\r/g, "\r\n"));
    }
  });
  return { socket, send, output, typed: (sessionId) => typed.get(sessionId) ?? "", mcpReports };
}
