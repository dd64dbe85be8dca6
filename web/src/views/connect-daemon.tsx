/**
 * The Connect page's daemon: how to install the official `orchestratia-agent` (in a virtual environment or with
 * pipx, with tmux), register it once and start it. Admins make the registration token here; others are told to ask.
 */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import { daemonLines, REGISTRATION_PLACEHOLDER } from "../connect-lines";
import { useMe } from "../me";
import type { IssuedToken } from "../types";
import { useAction } from "./controls";
import { CopyLine } from "./copy";
import { absoluteTime } from "../time-format";

export function DaemonConnect({ projectId, projectName }: { projectId: string; projectName?: string }) {
  const me = useMe();
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [onlyHere, setOnlyHere] = useState(true);
  const { run, busy, problem } = useAction();
  const lines = daemonLines(issued?.token);
  const make = () =>
    run("register", async () => {
      const body = { name: `Connect page: ${projectName ?? "project"}`, ...(onlyHere ? { project_ids: [projectId] } : {}) };
      setIssued(await ok(hub.POST("/api/v1/servers/tokens", { body })));
    });

  return (
    <section class="panel connect-daemon" aria-labelledby="connect-daemon-title">
      <h2 id="connect-daemon-title">Agents' machines (the daemon)</h2>
      <p class="muted">
        The official daemon, <code>orchestratia-agent</code>, runs on each machine your agents work on: it registers once, then keeps a socket open to the hub
        and runs the agents' terminal sessions in tmux. It needs Python 3.10 or newer and tmux.
      </p>
      <CopyLine label="First, on Debian or Ubuntu" name="daemon-apt" value={lines.tmux.debian} />
      <CopyLine label="or on macOS" name="daemon-brew" value={lines.tmux.macos} />
      <h3>Install and register</h3>
      <CopyLine label="In a virtual environment" name="daemon-venv" value={lines.venv.install} />
      <CopyLine label="then start it (in its own terminal, or as a service)" name="daemon-venv-start" value={lines.venv.start} />
      <CopyLine label="Or with pipx" name="daemon-pipx" value={lines.pipx.install} />
      <CopyLine label="then start it" name="daemon-pipx-start" value={lines.pipx.start} />
      {me.role === "admin" ? (
        <div class="actions-row registration">
          <label class="choice">
            <input type="checkbox" checked={onlyHere} onChange={(e) => setOnlyHere(e.currentTarget.checked)} /> The machine serves only this project
          </label>
          <span class="action">
            <button type="button" disabled={busy !== null} onClick={() => void make()}>
              Make a registration token
            </button>
            {problem("register")}
          </span>
          {issued && (
            <p class="shown-once" role="status">
              <strong>Shown once:</strong> the token is in the lines above, good for one registration until {absoluteTime(issued.expires_at)}.
            </p>
          )}
        </div>
      ) : (
        <p class="muted">
          Only an admin makes registration tokens: ask one for a token (good for one registration within a day) and put it in place of{" "}
          <code>{REGISTRATION_PLACEHOLDER}</code>.
        </p>
      )}
    </section>
  );
}
