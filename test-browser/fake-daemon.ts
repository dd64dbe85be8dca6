/**
 * A stand-in for the official daemon (orchestratia-agent) in the browser
 * tests: it registers its server and holds the daemon's socket exactly as
 * hub.py does, and runs pretend sessions: each prints a banner when started
 * (and its MCP status is reported, as hub.py's `_report_mcp_status` does with
 * its MCP server on), echoes what is typed into it (a carriage return as a new
 * line, as a terminal's line discipline would), keeps every byte it was sent,
 * answers a scrollback capture with what it printed, and counts each time it
 * is told to leave tmux's copy mode.
 */
import { createHash } from "node:crypto";
import { answerFsRequest, FakeMachine } from "../test/fake-fs-handler";
import { hub, hubAs, ok } from "./driver";

interface HubFrame {
  type: string;
  session_id?: string;
  data?: string;
  [key: string]: unknown;
}

export const BANNER = "\x1b[1;32mfake-agent\x1b[0m ready\r\n$ ";

const toBase64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString("base64");

/** Python's json.dumps of a flat object (", " and ": " between items), as hub.py sends its frames. */
const pythonJson = (frame: Record<string, unknown>) =>
  `{${Object.entries(frame)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(", ")}}`;

export class FakeDaemon {
  /** Every frame the hub sent after authenticating it, in order. */
  readonly frames: HubFrame[] = [];
  /** Every session_start the hub sent. */
  readonly starts: HubFrame[] = [];
  /** The sessions each session_exit_copy_mode named, in order. */
  readonly copyModeExits: string[] = [];
  /** What the daemon reports of each session's MCP configuration (hub.py: `merged` when the workspace has one already). */
  mcpStatus: "written" | "merged" | "workspace_readonly" | "unsupported" | "skipped" | null = "merged";
  /** What its scanner makes of a working directory (codebase_scanner), sent back for `scan_architecture` as hub.py's `_run_architecture_scan` does. */
  scanSnapshot: Record<string, unknown> | null = null;
  /** Every scan_architecture the hub sent. */
  readonly scans: HubFrame[] = [];
  /** The machine's files, which it answers file requests from (hub.py `_handle_fs_request`); each session's working directory is made when it starts. */
  machine = new FakeMachine();
  /** The sessions started, and their working directories. */
  private readonly folders = new Map<string, string>();
  /** What each session was sent, in order. */
  private readonly inputs = new Map<string, Buffer[]>();
  /** What each session printed. */
  private readonly printed = new Map<string, string>();
  private ws: WebSocket | null = null;

  private constructor(
    readonly id: string,
    readonly name: string,
    readonly apiKey: string,
  ) {}

  /** Registers a server serving the project with a registration token an admin issued, as `orchestratia-agent --register` does. */
  static async register(admin: string, projectId: string, name: string): Promise<FakeDaemon> {
    const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: { project_ids: [projectId] } }), 201);
    const reg = await ok(
      hubAs().POST("/api/v1/servers/register", {
        body: {
          name,
          hostname: `${name}.internal`,
          ip: "0.0.0.0",
          os: "linux",
          repos: {},
          system_info: { cpu_count: 2 },
          registration_token: token,
          machine_id: `${name}-machine-id`,
          mac_address: "02:00:00:00:00:01",
        },
      }),
      201,
    );
    const daemon = new FakeDaemon(reg.id, name, reg.api_key);
    await ok(hubAs({ apiKey: reg.api_key }).POST("/api/v1/servers/heartbeat", { body: { system_info: { cpu_count: 2 } } }));
    return daemon;
  }

  /** Opens the daemon's socket and authenticates with the API key; resolves on `auth_ok`. */
  connect(): Promise<void> {
    const ws = new WebSocket(`${hub().url.replace(/^http/, "ws")}/ws/server`);
    this.ws = ws;
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => ws.send(pythonJson({ type: "auth", api_key: this.apiKey })));
      ws.addEventListener("error", () => reject(new Error("the daemon socket failed")));
      ws.addEventListener("message", (e) => {
        const frame = JSON.parse(String(e.data)) as HubFrame;
        if (frame.type === "auth_ok") return resolve();
        if (frame.type === "auth_error") return reject(new Error(`auth refused: ${JSON.stringify(frame)}`));
        this.onFrame(frame);
      });
    });
  }

  close() {
    this.ws?.close(1000, "daemon stopping");
  }

  /** What a session was sent, as bytes. */
  received(sessionId: string): Buffer {
    return Buffer.concat(this.inputs.get(sessionId) ?? []);
  }

  /** What a session was sent, a frame each. */
  inputFrames(sessionId: string): Buffer[] {
    return [...(this.inputs.get(sessionId) ?? [])];
  }

  private send(frame: Record<string, unknown>) {
    this.ws?.send(pythonJson(frame));
  }

  /** PATCH /api/v1/server/sessions/{id}/mcp-status with the API key, as hub.py does after writing the agent's MCP configuration. */
  private async reportMcpStatus(sessionId: string, mcpStatus: NonNullable<FakeDaemon["mcpStatus"]>) {
    await ok(
      hubAs({ apiKey: this.apiKey }).PATCH("/api/v1/server/sessions/{id}/mcp-status", { params: { path: { id: sessionId } }, body: { mcp_status: mcpStatus } }),
    );
  }

  /** Output of a session, as session.py's reader sends it. */
  output(sessionId: string, bytes: Uint8Array | string) {
    this.printed.set(sessionId, (this.printed.get(sessionId) ?? "") + Buffer.from(bytes).toString("utf8"));
    this.send({ type: "session_output", session_id: sessionId, data: toBase64(bytes) });
  }

  private onFrame(frame: HubFrame) {
    this.frames.push(frame);
    if (frame.type.startsWith("fs_")) {
      for (const answer of answerFsRequest(this.machine, this.folders, frame)) this.send(answer);
      return;
    }
    const id = frame.session_id;
    if (!id) return;
    switch (frame.type) {
      case "session_start":
        this.starts.push(frame);
        this.inputs.set(id, []);
        this.folders.set(id, (frame.working_directory as string | undefined) ?? "/tmp/x");
        this.machine.dir(this.folders.get(id)!);
        this.send({
          type: "session_started",
          session_id: id,
          pid: 4242,
          tmux_name: `orc-${id.slice(0, 12)}`,
          working_dir: (frame.working_directory as string | undefined) ?? "/tmp/x",
        });
        this.output(id, BANNER);
        if (this.mcpStatus) void this.reportMcpStatus(id, this.mcpStatus);
        break;
      case "session_exit_copy_mode":
        this.copyModeExits.push(id);
        break;
      case "session_input": {
        const bytes = Buffer.from(frame.data ?? "", "base64");
        this.inputs.get(id)?.push(bytes);
        this.output(id, Buffer.from(bytes.toString("latin1").replaceAll("\r", "\r\n"), "latin1"));
        break;
      }
      case "capture_scrollback":
        this.send({ type: "scrollback_captured", session_id: id, lines: (this.printed.get(id) ?? "").split("\r\n") });
        break;
      case "scan_architecture": {
        this.scans.push(frame);
        if (!this.scanSnapshot || !frame.working_directory) break;
        const context = { triggered_by: "on_demand", session_id: id, project_id: frame.project_id ?? "" };
        this.send({ type: "architecture_snapshot", session_id: id, project_id: frame.project_id ?? "", snapshot: { ...this.scanSnapshot, ...context } });
        break;
      }
      case "session_close":
      case "session_kill":
        this.send({ type: "session_closed", session_id: id, exit_code: frame.type === "session_kill" ? 137 : 0 });
        break;
    }
  }
}

/**
 * hub.py's two file loops (`pending_uploads_loop`, `pending_pulls_loop`), polling every `everyMs` instead of 3 s:
 * each pending upload is fetched from its `download_url` with the key, checked against its sha256 and acked with
 * where it was written; each pending download is answered from `files` (path → content) as multipart `file`, or
 * failed as hub.py fails a path that does not exist. What it wrote is in `written`.
 */
export function serveFiles(apiKey: string, files: Record<string, string>, everyMs = 250) {
  const headers = { "X-API-Key": apiKey };
  const written = new Map<string, Buffer>();
  const post = (path: string, body: unknown) =>
    fetch(hub().url + path, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: pythonJson(body as Record<string, unknown>) });
  const once = async () => {
    const uploads = (await (await fetch(`${hub().url}/api/v1/server/files/pending`, { headers })).json()) as {
      upload_id: string;
      filename: string;
      download_url: string;
      sha256: string;
    }[];
    for (const item of uploads) {
      const url = item.download_url.startsWith("/") ? hub().url + item.download_url : item.download_url;
      const bytes = Buffer.from(await (await fetch(url, { headers })).arrayBuffer());
      const ok = createHash("sha256").update(bytes).digest("hex") === item.sha256;
      const dest = `/tmp/orchestratia-uploads/${item.filename}`;
      if (ok) written.set(dest, bytes);
      await post(`/api/v1/server/files/${item.upload_id}/ack`, ok ? { success: true, path: dest } : { success: false, error: "sha256 mismatch" });
    }
    const pulls = (await (await fetch(`${hub().url}/api/v1/server/files/pulls/pending`, { headers })).json()) as { download_id: string; path: string }[];
    for (const item of pulls) {
      const content = files[item.path];
      if (content === undefined) {
        await post(`/api/v1/server/files/pulls/${item.download_id}/fail`, { error: `file not found: ${item.path}` });
        continue;
      }
      const form = new FormData();
      form.append("file", new Blob([content], { type: "application/octet-stream" }), item.path.split("/").at(-1));
      await fetch(`${hub().url}/api/v1/server/files/pulls/${item.download_id}/upload`, { method: "POST", headers, body: form });
    }
  };
  let running = true;
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    written,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
