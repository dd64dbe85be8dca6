/** The servers agents run on: presence, capabilities (as matched), load against capacity; registration tokens for admins. Each links to its page. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useProjectNames } from "../project-names";
import { useMe } from "../me";
import type { IssuedToken, Server } from "../types";
import { linkProps } from "../router";
import { Problem } from "./controls";
import { absoluteTime } from "../time-format";

/** How often presence is read again (servers beat every 30 s and count as offline after 90 s). */
const REFRESH_MS = 15_000;
const INSTALL = "pip install git+https://github.com/kumarimlab/orchestratia-agent.git";

const list = (items: string[] | undefined) => (items?.length ? items.join(", ") : "—");

export function Agents() {
  const me = useMe();
  const [servers, setServers] = useState<Server[] | null>(null);
  const projects = useProjectNames();
  const [issued, setIssued] = useState<IssuedToken | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const load = () =>
      void ok(hub.GET("/api/v1/servers")).then(
        (r) => setServers(r.servers),
        (e) => setError(e.message),
      );
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const issue = async () => {
    setError(null);
    try {
      setIssued(await ok(hub.POST("/api/v1/servers/tokens", { body: {} })));
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const command = issued && `${INSTALL} && orchestratia-agent --register ${issued.token}`;

  return (
    <section>
      <h1>Agents</h1>
      {servers === null && <Problem message={error} />}
      {servers?.length === 0 && <p class="muted">No server has registered yet.</p>}
      {servers && servers.length > 0 && (
        <table class="servers">
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">Presence</th>
              <th scope="col">Load</th>
              <th scope="col">Languages</th>
              <th scope="col">Tools</th>
              <th scope="col">Tags</th>
              <th scope="col">Sessions</th>
              <th scope="col">Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {servers.map((s) => (
              <tr key={s.id} data-server={s.name}>
                <th scope="row">
                  <a {...linkProps(`/servers/${s.id}`)}>{s.name}</a> <span class="muted">{s.hostname}</span>
                </th>
                <td>
                  <span class={`presence presence-${s.revoked ? "revoked" : s.status}`}>{s.revoked ? "revoked" : s.status}</span>
                  {s.daemon_connected && <span class="muted"> · daemon connected</span>}
                </td>
                <td>
                  <meter min={0} max={s.max_concurrent_tasks} value={s.active_tasks} /> {s.active_tasks}/{s.max_concurrent_tasks}
                </td>
                {s.effective ? (
                  <>
                    <td>{list(s.effective.languages)}</td>
                    <td>{list(s.effective.tools)}</td>
                    <td>{list(s.effective.tags)}</td>
                  </>
                ) : (
                  <td colSpan={3} class="no-capabilities">
                    No capabilities: it only takes tasks that require nothing.{" "}
                    <a {...linkProps(`/servers/${s.id}`)}>{me.role === "admin" ? "Declare them" : "See how"}</a>
                  </td>
                )}
                <td>{list(s.sessions.map((x) => `${x.name} (${projects.get(x.project_id) ?? "project"})`))}</td>
                <td>{s.last_heartbeat ? absoluteTime(s.last_heartbeat) : "never"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {me.role === "admin" && (
        <section class="register">
          <h2>Register a server</h2>
          <p>A registration token is shown once and is good for one registration within a day.</p>
          <button type="button" onClick={() => void issue()}>
            New registration token
          </button>
          {servers !== null && <Problem message={error} />}
          {command && (
            <div class="command">
              <label>
                Run this on the server
                <input readOnly value={command} onFocus={(e) => e.currentTarget.select()} size={80} />
              </label>
              <button type="button" onClick={() => void navigator.clipboard?.writeText(command)}>
                Copy
              </button>
            </div>
          )}
        </section>
      )}
    </section>
  );
}
