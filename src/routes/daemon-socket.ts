/**
 * `GET /ws/server`: the official daemon's socket. The daemon connects with no
 * credentials and sends `{"type": "auth", "api_key": "orc_..."}` first
 * (hub.py `connect_ws`), so the Worker takes that first frame, checks the key,
 * and then joins the socket to the server's link, relaying frames both ways.
 * The daemon reads `auth_ok` (from the link) or anything else as a refusal.
 */
import { Hono } from "hono";
import { serverForApiKey } from "../middleware/guards";
import type { HubContext, HubEnv } from "../http/context";
import { closeQuietly, relayAfterFirstFrame } from "../http/first-frame-relay";
import { requireUpgrade } from "../middleware/upgrade";
import { documented } from "../openapi/operation";
import { linkStub } from "../server-link/client";
import { execOutputOf } from "../server-link/remote-exec";
import { isSnapshotFrame, snapshotFromDaemon } from "../code-health/frames";
import { logError } from "../runtime/log";
import { DAEMON_AUTH_GRACE_MS, DAEMON_CLOSE, MAX_DAEMON_FRAME_BYTES, overFrameLimit, oversizedFrame, parseDaemonFrame } from "../server-link/daemon-frames";
import { FS_RESULTS, MAX_FS_ANSWER_BYTES, oversizedFsAnswer } from "../server-link/session-files";

export const daemonSocketRoutes = new Hono<HubEnv>();

function refuse(ws: WebSocket, detail: string) {
  try {
    ws.send(JSON.stringify({ type: "auth_error", detail }));
  } catch {
    // The daemon left.
  }
  closeQuietly(ws, DAEMON_CLOSE.unauthorized, detail);
}

/** Checks the first frame's key and connects the daemon to its server's link; returns that socket and the server, or null when refused. */
async function joinLink(c: HubContext, daemon: WebSocket, first: string | ArrayBuffer): Promise<{ socket: WebSocket; serverId: string } | null> {
  const frame = parseDaemonFrame(first);
  const apiKey = frame.ok && frame.type === "auth" ? frame.frame.api_key : undefined;
  if (typeof apiKey !== "string" || apiKey === "") {
    refuse(daemon, 'Authenticate first: {"type": "auth", "api_key": "orc_..."}');
    return null;
  }
  const server = await serverForApiKey(c, apiKey);
  if (!server?.apiKeyHash) {
    refuse(daemon, "The API key is invalid or has been revoked");
    return null;
  }
  const res = await linkStub(c.env, server.id).fetch("https://link/daemon", {
    headers: { Upgrade: "websocket", "X-Server-Id": server.id, "X-Server-Name": server.name, "X-Key-Hash": server.apiKeyHash },
  });
  if (!res.webSocket) {
    refuse(daemon, "The API key has been revoked");
    return null;
  }
  res.webSocket.accept();
  return { socket: res.webSocket, serverId: server.id };
}

daemonSocketRoutes.get(
  "/",
  documented({
    id: "openDaemonSocket",
    tag: "Daemon",
    summary: "The official daemon's WebSocket (orchestratia-agent)",
    description: [
      '**Auth.** The upgrade carries no credentials: the first frame must be `{"type": "auth", "api_key": "orc_..."}`, within ' +
        `${DAEMON_AUTH_GRACE_MS / 1000} s. The hub answers \`{"type": "auth_ok", "server_id"}\`, or \`{"type": "auth_error", "detail"}\` and closes with ` +
        `${DAEMON_CLOSE.unauthorized}. Frames sent before \`auth_ok\` are held and delivered after it.`,
      "**Frames.** JSON text frames of the daemon's protocol (API.md \"The official daemon's channel\"): the hub sends `session_start`, " +
        "`session_input`, `session_resize`, `session_close`, `session_kill`, `session_exit_copy_mode`, `capture_scrollback`, `task_assigned` (never " +
        "`pending_approval: true`, `task_approved` or `task_rejected`, for which the daemon writes a drawn box into the agent's input), `intervention_response`, `task_note`, `note_for_session`, `plan_approved`, `plan_revision`, `task_updated`, " +
        "`task_status_update`, `remote_exec`, `fs_list_dir`, `fs_read_file`, `fs_write_file`, `fs_stat`, `file_offer`, `file_accepted`, `file_rejected`, `file_send_start`, `file_chunk`, `file_complete`, " +
        "`file_ack`, `file_error`, `setup_ssh_access`, `grant_ssh_access`, `revoke_ssh_access`, `revoke_grant_access`, `tunnel_open`, " +
        "`tunnel_ready`, `tunnel_error`, `tunnel_data`, `tunnel_close`, `tunnel_closed`, `scan_architecture`, `pong`; it reads `session_started`, `session_recovered`, " +
        "`session_output` (base64 `data`), `session_screen`, `session_closed`, `session_error`, `scrollback_captured`, `remote_exec_result`, " +
        "`fs_list_dir_result`, `fs_read_file_result`, `fs_write_file_result`, `fs_stat_result` (typed `file`, `dir` or `symlink` instead when the " +
        "path exists, as hub.py spreads fs_handler's answer over its envelope), " +
        "`file_accept`, `file_chunk`, `file_complete`, `file_ack`, `file_error`, `s2s_tunnel_open`, `tunnel_ready`, `tunnel_error`, `tunnel_data`, " +
        "`tunnel_close`, `tunnel_closed`, `ping`, `architecture_snapshot` (a code health snapshot, of up to 16 MiB), and ignores other kinds. A frame the hub cannot take is answered " +
        `\`{"type": "error", "code", "detail"}\` and the socket stays open; frames over ${MAX_DAEMON_FRAME_BYTES / 1024 / 1024} MiB are dropped ` +
        "(`FRAME_TOO_LARGE`), except a `remote_exec_result`, whose output is cut to 1 MiB and answered, and an `fs_*_result` " +
        `(a file of up to the daemon's 5 MB), answered whole up to ${Math.floor(MAX_FS_ANSWER_BYTES / 1024 / 1024)} MiB and 413 \`FILE_TOO_LARGE\` beyond.`,
      `**Close codes.** ${DAEMON_CLOSE.unauthorized} refused credentials, ${DAEMON_CLOSE.revoked} the API key was revoked or replaced by a ` +
        `new registration, ${DAEMON_CLOSE.replaced} another connection of the same server replaced this one.`,
      "Before upgrading: 426 without `Upgrade: websocket`.",
    ].join("\n\n"),
    caller: "anyone",
    headers: { Upgrade: "`websocket`" },
    responses: { 101: { description: "The daemon's WebSocket is open; authenticate with the first frame" } },
  }),
  (c) => {
    requireUpgrade(c);
    const { 0: client, 1: daemon } = new WebSocketPair();
    daemon.accept();
    let serverId: string | null = null;
    relayAfterFirstFrame(daemon, {
      graceMs: DAEMON_AUTH_GRACE_MS,
      late: `No API key within ${DAEMON_AUTH_GRACE_MS / 1000} s`,
      failed: "The hub could not check the API key; retry",
      refuse: (detail) => refuse(daemon, detail),
      join: async (first) => {
        const accepted = await joinLink(c, daemon, first);
        serverId = accepted?.serverId ?? null;
        return accepted?.socket ?? null;
      },
      // The runtime refuses larger frames between the Worker and the link: the daemon is told, and stays connected.
      intercept: (data, link) => {
        if (serverId && isSnapshotFrame(data)) {
          // Stored here, whatever its size: the server's link takes frames of at most 1 MiB.
          const id = serverId;
          void snapshotFromDaemon(c.env, id, data as string).then(
            (refused) => refused && daemon.send(JSON.stringify({ type: "error", ...refused })),
            (e: unknown) => {
              logError("architecture snapshot failed", { server_id: id, operation: "architecture_snapshot" }, e);
              daemon.send(JSON.stringify({ type: "error", code: "INTERNAL_ERROR", detail: "the hub could not store architecture_snapshot" }));
            },
          );
          return true;
        }
        if (!overFrameLimit(data)) return false;
        const tooBig = oversizedFrame(data);
        if (serverId && tooBig.type === "remote_exec_result") {
          // A command's output is answered cut rather than dropped: handed to the link over RPC, which takes more than a frame.
          const frame = parseDaemonFrame(data);
          if (frame.ok) {
            void linkStub(c.env, serverId).execAnswered({ ...frame.frame, ...execOutputOf(frame.frame) });
            return true;
          }
        }
        if (serverId && tooBig.requestId && tooBig.type && FS_RESULTS.includes(tooBig.type)) {
          // A file the daemon sent in one frame (up to its 5 MB): handed to the link over RPC, which takes more than a frame.
          const id = serverId;
          void linkStub(c.env, id)
            .filesAnswered(tooBig.requestId, oversizedFsAnswer(data))
            .catch((e: unknown) => logError("a large file answer could not reach the link", { server_id: id, operation: tooBig.type! }, e));
          return true;
        }
        daemon.send(
          JSON.stringify({
            type: "error",
            code: "FRAME_TOO_LARGE",
            detail: `frames are at most ${MAX_DAEMON_FRAME_BYTES} bytes; ${tooBig.type ?? "the frame"} was dropped`,
          }),
        );
        if (link && tooBig.type === "scrollback_captured" && tooBig.sessionId) {
          // The viewers who asked for it learn why nothing came.
          link.send(
            JSON.stringify({
              type: "scrollback_captured",
              session_id: tooBig.sessionId,
              lines: [],
              error: `the capture was larger than ${MAX_DAEMON_FRAME_BYTES} bytes`,
            }),
          );
        }
        return true;
      },
    });
    return new Response(null, { status: 101, webSocket: client });
  },
);
