/**
 * What the link does with each frame of its daemon (hub.py's `ws_send`
 * kinds): answers to requests go to whoever waits, stream frames are passed
 * on in the order they came (handled without awaiting anything first), and
 * session reports are recorded. Kinds the hub takes no part in are logged.
 */
import { logDebug } from "../runtime/log";
import { sessionReportOf } from "./daemon-frames";
import type { FileTransfers } from "./file-transfers";
import type { LinkGrants } from "./link-grants";
import type { LinkSessions } from "./link-sessions";
import type { PendingRequests } from "./pending-requests";
import type { PendingExecs } from "./remote-exec";
import { fsAnswerOf, type FsAnswer } from "./session-files";
import type { Terminals } from "./terminals";
import type { Tunnels } from "./tunnels";

/** The link's collaborators that a daemon's frames reach. */
export interface DaemonFrameHandlers {
  serverId: string | undefined;
  sessions: LinkSessions;
  terminals: Terminals;
  transfers: FileTransfers;
  tunnels: Tunnels;
  grants: LinkGrants;
  execs: PendingExecs;
  fsRequests: PendingRequests<FsAnswer>;
  daemonError(ws: WebSocket, code: string, detail: string): void;
}

export async function handleDaemonFrame(h: DaemonFrameHandlers, ws: WebSocket, type: string, frame: Record<string, unknown>, message: string | ArrayBuffer) {
  switch (type) {
    case "remote_exec_result":
      if (!h.execs.answeredBy(frame)) logDebug("remote_exec_result nobody waits for", { server_id: h.serverId, operation: type });
      return;
    case "fs_list_dir_result":
    case "fs_read_file_result":
    case "fs_write_file_result":
    case "fs_stat_result":
    // A stat of something that exists: hub.py's envelope takes fs_handler's `type` (session-files.ts).
    case "file":
    case "dir":
    case "symlink":
      if (!h.fsRequests.answered(frame.request_id, fsAnswerOf(frame))) logDebug(`${type} nobody waits for`, { server_id: h.serverId, operation: type });
      return;
    // Handled without awaiting anything first, so chunks are passed on in the order they came.
    case "file_chunk":
    case "file_complete":
    case "file_accept":
    case "file_ack":
    case "file_error": {
      const text = typeof message === "string" ? message : new TextDecoder().decode(message);
      const handled =
        ((type === "file_chunk" || type === "file_complete" || type === "file_error") && h.transfers.fromSender(type, frame, text)) ||
        ((type === "file_accept" || type === "file_ack" || type === "file_error") && h.transfers.fromReceivingDaemon(type, frame));
      if (!handled) h.daemonError(ws, "UNKNOWN_TRANSFER", `${type}: no transfer ${String(frame.transfer_id)} of this server's`);
      return;
    }
    case "s2s_tunnel_open":
      return h.grants.openTunnel(ws, frame);
    // Handled without awaiting anything first, so a tunnel's frames are passed on in the order they came.
    case "tunnel_ready":
    case "tunnel_error":
    case "tunnel_data":
    case "tunnel_close":
    case "tunnel_closed": {
      const text = typeof message === "string" ? message : new TextDecoder().decode(message);
      if (!h.tunnels.fromDaemon(type, frame, text)) h.daemonError(ws, "UNKNOWN_TUNNEL", `${type}: no tunnel ${String(frame.tunnel_id)} of this server's`);
      return;
    }
    case "ping":
      return ws.send(JSON.stringify({ type: "pong" }));
    case "session_output":
      return h.sessions.output(ws, frame);
    case "session_started":
    case "session_error":
    case "session_closed": {
      const session = await h.sessions.own(ws, frame, type);
      if (session) await h.sessions.report(session, sessionReportOf(type, frame)!);
      return;
    }
    case "session_recovered":
      return h.sessions.recovered(ws, frame);
    case "session_screen":
    case "scrollback_captured": {
      const session = await h.sessions.own(ws, frame, type);
      const lines = Array.isArray(frame.lines) ? frame.lines.filter((l) => typeof l === "string") : [];
      if (session)
        h.terminals.relay(session.id, {
          type: type === "session_screen" ? "screen" : "scrollback",
          lines,
          ...(typeof frame.error === "string" ? { error: frame.error } : {}),
        });
      return;
    }
    default:
      // Kinds this hub does not take part in (tunnels, file transfer, governance, …).
      logDebug("daemon message ignored", { server_id: h.serverId, operation: type });
  }
}
