/**
 * "Connect": a single-use token for `orchestratia-connect`, which opens a
 * tunnel from the person's machine to a port on the session's machine through
 * the hub (SSH by default). For people who may type in the session.
 */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import type { ConnectToken, Session } from "../types";
import { useAction } from "./controls";
import { isOpen } from "./session-controls";
import { absoluteTime } from "../time-format";

export function SessionConnect({ session }: { session: Session }) {
  const canWrite = useCanWrite();
  const { run, busy, problem } = useAction();
  const [port, setPort] = useState("22");
  const [issued, setIssued] = useState<ConnectToken | null>(null);
  if (!canWrite || !isOpen(session)) return null;
  const connect = () =>
    run("connect", async () => {
      setIssued(
        await ok(
          hub.POST("/api/v1/projects/{id}/sessions/{sid}/connect", {
            params: { path: { id: session.project_id, sid: session.id } },
            body: { target_port: Number(port) },
          }),
        ),
      );
    });
  return (
    <div class="session-connect">
      <span class="connect-port">
        <label>
          Port on {session.server_name}
          <input type="number" min={1} max={65535} value={port} onInput={(e) => setPort(e.currentTarget.value)} />
        </label>
        <button type="button" disabled={busy !== null} onClick={() => void connect()} title="A command that opens a tunnel from your machine to this port">
          Connect
        </button>
        {problem("connect")}
      </span>
      {issued && (
        <div class="command">
          <label>
            Run this on your machine (good once, until <time dateTime={issued.expires_at}>{absoluteTime(issued.expires_at)}</time>)
            <input readOnly value={issued.command} onFocus={(e) => e.currentTarget.select()} size={80} />
          </label>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(issued.command)}>
            Copy
          </button>
        </div>
      )}
    </div>
  );
}
