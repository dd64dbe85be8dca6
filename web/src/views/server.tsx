/** One server: its status, sessions, current tasks and capabilities; admins declare capabilities, rename, revoke or remove it. */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useProjectNames } from "../project-names";
import { useMe } from "../me";
import { linkProps, navigate } from "../router";
import type { ServerPage as Server } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";
import { CapabilityTable, DeclareForm } from "./server-capabilities";
import { absoluteTime } from "../time-format";

/** As on the Agents page: servers beat every 30 s. */
const REFRESH_MS = 15_000;

export function ServerPage({ serverId }: { serverId: string }) {
  const me = useMe();
  const isAdmin = me.role === "admin";
  const [server, setServer] = useState<Server | null>(null);
  const projects = useProjectNames();
  const [error, setError] = useState<string | null>(null);
  const [declaring, setDeclaring] = useState(false);

  const load = () =>
    void ok(hub.GET("/api/v1/servers/{id}", { params: { path: { id: serverId } } })).then(
      (s) => (setServer(s), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => clearInterval(timer);
  }, [serverId]);

  if (!server) return <section>{error ? <Failed what="this server" message={error} retry={load} /> : <Loading what="the server" />}</section>;
  const project = (id: string) => projects.get(id) ?? "a project";
  return (
    <section class="server-page">
      <p>
        <a {...linkProps("/agents")}>← Agents</a>
      </p>
      <h1>
        {server.name} <span class={`presence presence-${server.revoked ? "revoked" : server.status}`}>{server.revoked ? "revoked" : server.status}</span>
      </h1>
      <p class="meta">
        {server.hostname}
        {server.os && ` · ${server.os}`} · {server.daemon_connected ? "daemon connected" : "daemon not connected"} · last heartbeat{" "}
        {server.last_heartbeat ? absoluteTime(server.last_heartbeat) : "never"} · load{" "}
        <meter min={0} max={server.max_concurrent_tasks} value={server.active_tasks} /> {server.active_tasks}/{server.max_concurrent_tasks}
      </p>

      <h2>Capabilities</h2>
      {server.effective === null && (
        <div class="no-capabilities" role="note">
          <p>
            <strong>No capabilities.</strong> The daemon sent none and none are declared here, so this server only takes tasks that require nothing (one at a
            time).{" "}
            {isAdmin
              ? "Declare what it can do — languages, tools, environments, tags, repos — and tasks that need them can go to it."
              : "An admin can declare what it can do on this page."}
          </p>
        </div>
      )}
      {isAdmin && !declaring && (
        <button type="button" onClick={() => setDeclaring(true)}>
          {server.declared ? "Edit declared capabilities" : "Declare capabilities"}
        </button>
      )}
      {declaring && (
        <DeclareForm server={server} onSaved={(s) => (setServer(s), setDeclaring(false), toast("Capabilities saved."))} onCancel={() => setDeclaring(false)} />
      )}
      <CapabilityTable server={server} />

      <h2>Sessions</h2>
      {server.sessions.length === 0 ? (
        <p class="muted">No open session in your projects.</p>
      ) : (
        <ul class="server-sessions">
          {server.sessions.map((s) => (
            <li key={s.id}>
              <a {...linkProps(`/projects/${s.project_id}/sessions/${s.id}`)}>{s.name}</a>{" "}
              <span class="muted">
                {project(s.project_id)} · {s.status}
              </span>
            </li>
          ))}
        </ul>
      )}

      <h2>Current tasks</h2>
      {server.tasks.length === 0 ? (
        <p class="muted">No unfinished task in your projects.</p>
      ) : (
        <ul class="server-tasks">
          {server.tasks.map((t) => (
            <li key={t.id}>
              <a {...linkProps(`/projects/${t.project_id}/tasks/${t.id}`)}>{t.title}</a>{" "}
              <span class={`status status-${t.status}`}>{t.status.replace("_", " ")}</span> <span class="muted">{project(t.project_id)}</span>
            </li>
          ))}
        </ul>
      )}
      {isAdmin && <ServerAdmin server={server} onChanged={setServer} />}
    </section>
  );
}

/** Rename, revoke the key, remove: each asks first where it cannot be undone. */
function ServerAdmin({ server, onChanged }: { server: Server; onChanged: (s: Server) => void }) {
  const [name, setName] = useState(server.name);
  const { run, busy, problem } = useAction();
  const path = { params: { path: { id: server.id } } };
  const reread = async () => onChanged(await ok(hub.GET("/api/v1/servers/{id}", path)));
  return (
    <section class="server-admin">
      <h2>Manage</h2>
      <form
        class="form-row"
        onSubmit={(e) => {
          e.preventDefault();
          void run("rename", async () => {
            await ok(hub.PATCH("/api/v1/servers/{id}", { ...path, body: { name } }));
            await reread();
            toast(`Renamed to ${name}.`);
          });
        }}
      >
        <label>
          Name
          <input name="server-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy !== null || name.trim() === server.name}>
          Rename
        </button>
        {problem("rename")}
      </form>
      <p class="muted">A daemon registering again under the old name then makes a new server.</p>
      <div class="actions-row">
        {!server.revoked && (
          <span class="action">
            <button
              type="button"
              class="danger"
              disabled={busy !== null}
              onClick={() =>
                confirm(`Revoke ${server.name}'s key? Its daemon and agents stop and its sessions close; it stays listed and can register again.`) &&
                void run("revoke", async () => {
                  await ok(hub.POST("/api/v1/servers/{id}/revoke", path));
                  await reread();
                  toast(`Revoked ${server.name}'s key.`);
                })
              }
            >
              Revoke key
            </button>
            {problem("revoke")}
          </span>
        )}
        <span class="action">
          <button
            type="button"
            class="danger"
            disabled={busy !== null}
            onClick={() =>
              confirm(`Remove ${server.name}? Its key is revoked, its sessions close, and its unfinished tasks are handed back.`) &&
              void run("remove", async () => {
                await ok(hub.DELETE("/api/v1/servers/{id}", path));
                toast(`Removed ${server.name}.`);
                navigate("/agents");
              })
            }
          >
            Remove server
          </button>
          {problem("remove")}
        </span>
      </div>
    </section>
  );
}
