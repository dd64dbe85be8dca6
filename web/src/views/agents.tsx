/** The servers agents run on: presence, capabilities (as matched), load against capacity; registration tokens for admins. Each links to its page. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useProjectNames } from "../project-names";
import { useMe } from "../me";
import type { IssuedToken, Server } from "../types";
import { linkProps } from "../router";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { CopyLine } from "./copy";
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

  const load = () =>
    void ok(hub.GET("/api/v1/servers")).then(
      (r) => (setServers(r.servers), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const issue = async () => {
    setError(null);
    try {
      setIssued(await ok(hub.POST("/api/v1/servers/tokens", { body: {} })));
      toast("Registration token made: run the command below on the server.");
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const command = issued && `${INSTALL} && orchestratia-agent --register ${issued.token}`;

  return (
    <section>
      <h1>Agents</h1>
      {servers === null ? (
        error ? (
          <Failed what="the servers" message={error} retry={load} />
        ) : (
          <Loading what="servers" />
        )
      ) : servers.length === 0 ? (
        <Empty title="No server has registered yet.">
          {me.role === "admin" ? "Register one below: its daemon runs the agents." : "An admin registers servers."}
        </Empty>
      ) : (
        <DataTable
          class="servers-list"
          label="Servers"
          rows={servers}
          rowKey={(s) => s.id}
          rowAttributes={(s) => ({ "data-server": s.name })}
          columns={[
            {
              label: "Server",
              rowHeader: true,
              cell: (s) => (
                <>
                  <a {...linkProps(`/servers/${s.id}`)}>{s.name}</a> <span class="muted">{s.hostname}</span>
                </>
              ),
            },
            {
              label: "Presence",
              cell: (s) => (
                <>
                  <span class={`presence presence-${s.revoked ? "revoked" : s.status}`}>{s.revoked ? "revoked" : s.status}</span>
                  {s.daemon_connected && <span class="muted"> · daemon connected</span>}
                </>
              ),
            },
            {
              label: "Load",
              cell: (s) => (
                <>
                  <meter min={0} max={s.max_concurrent_tasks} value={s.active_tasks} aria-label={`Load of ${s.name}`} /> {s.active_tasks}/
                  {s.max_concurrent_tasks}
                </>
              ),
            },
            {
              label: "Languages",
              cell: (s) =>
                s.effective ? (
                  list(s.effective.languages)
                ) : (
                  <span class="no-capabilities">
                    No capabilities: it only takes tasks that require nothing.{" "}
                    <a {...linkProps(`/servers/${s.id}`)}>{me.role === "admin" ? "Declare them" : "See how"}</a>
                  </span>
                ),
            },
            { label: "Tools", cell: (s) => list(s.effective?.tools) },
            { label: "Tags", cell: (s) => list(s.effective?.tags), wideOnly: true },
            { label: "Sessions", cell: (s) => list(s.sessions.map((x) => `${x.name} (${projects.get(x.project_id) ?? "project"})`)) },
            { label: "Last heartbeat", cell: (s) => (s.last_heartbeat ? absoluteTime(s.last_heartbeat) : "never"), wideOnly: true },
          ]}
        />
      )}
      {me.role === "admin" && (
        <section class="panel register">
          <h2>Register a server</h2>
          <p class="muted">A registration token is shown once and is good for one registration within a day.</p>
          <button type="button" onClick={() => void issue()}>
            New registration token
          </button>
          {servers !== null && <Problem message={error} />}
          {command && <CopyLine label="Run this on the server" value={command} name="register-command" />}
        </section>
      )}
    </section>
  );
}
