/** SSH access grants between servers (admins): who may reach whose machine, until when, and revoking it. */
import { When } from "../ui/when";
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { AccessGrant, Server } from "../types";
import { DataTable, type Column } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem, useAction } from "./controls";

const LIFETIMES: [string, number][] = [
  ["1 hour", 3600],
  ["24 hours", 86_400],
  ["7 days", 7 * 86_400],
  ["30 days", 30 * 86_400],
];

/** What the source's machine runs to reach the target (cli.py `grants` prints the same). */
export const sshCommand = (g: Pick<AccessGrant, "id" | "local_bind_port" | "ssh_username">) =>
  `ssh -i ~/.orchestratia/ssh_keys/grant_${g.id} -p ${g.local_bind_port} ${g.ssh_username}@localhost`;

export function Access() {
  const me = useMe();
  const [grants, setGrants] = useState<AccessGrant[] | null>(null);
  const [servers, setServers] = useState<Server[]>([]);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/access-grants")).then(
      (r) => (setGrants(r.grants), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    if (me.role !== "admin") return;
    load();
    void ok(hub.GET("/api/v1/servers")).then(
      (r) => setServers(r.servers.filter((s) => !s.revoked)),
      () => undefined,
    );
  }, [me.role]);

  if (me.role !== "admin") return <Empty title="Only admins grant access between servers." />;
  return (
    <section class="access">
      <h1>Access</h1>
      <p class="muted intro">
        A grant lets one server's machine reach another's SSH through the hub: the target's daemon installs the grant's public key for its{" "}
        <code>orchestratia</code> user, the source's daemon listens on a local port. No machine opens a port to the network.
      </p>
      <NewGrant servers={servers} onMade={load} />
      <h2>Grants</h2>
      {grants === null ? (
        error ? (
          <Failed what="the grants" message={error} retry={load} />
        ) : (
          <Loading what="grants" />
        )
      ) : grants.length === 0 ? (
        <Empty title="No grant yet.">Make one above: it lasts until it expires or you revoke it.</Empty>
      ) : (
        <DataTable
          class="grants"
          label="Access grants"
          rows={grants}
          rowKey={(g) => g.id}
          rowAttributes={(g) => ({ "data-grant": g.id })}
          columns={GRANT_COLUMNS(load)}
        />
      )}
    </section>
  );
}

const GRANT_COLUMNS = (onRevoked: () => void): Column<AccessGrant>[] => [
  { label: "From", rowHeader: true, cell: (g) => g.source_server_name },
  { label: "To", cell: (g) => g.target_server_name },
  { label: "Level", cell: (g) => g.privilege_level },
  {
    label: "Ports",
    cell: (g) => (
      <>
        localhost:{g.local_bind_port} → {g.target_port}
        {g.status === "active" && <code class="command-line">{sshCommand(g)}</code>}
      </>
    ),
  },
  {
    label: "Status",
    cell: (g) => (
      <span class={`status status-${g.status}`} data-status={g.status}>
        {g.status}
      </span>
    ),
  },
  { label: "Expires", cell: (g) => <When iso={g.ended_at ?? g.expires_at} /> },
  { label: "Made by", cell: (g) => g.created_by, wideOnly: true },
  { label: "Actions", actions: true, cell: (g) => g.status === "active" && <RevokeGrant grant={g} onRevoked={onRevoked} /> },
];

function RevokeGrant({ grant: g, onRevoked }: { grant: AccessGrant; onRevoked: () => void }) {
  const { run, busy, problem } = useAction();
  const revoke = () =>
    run("revoke", async () => {
      await ok(hub.DELETE("/api/v1/access-grants/{id}", { params: { path: { id: g.id } } }));
      toast(`Revoked ${g.source_server_name}'s access to ${g.target_server_name}.`);
      onRevoked();
    });
  return (
    <span class="action">
      <button
        type="button"
        class="danger"
        disabled={busy !== null}
        aria-busy={busy !== null}
        aria-label={`Revoke the grant from ${g.source_server_name} to ${g.target_server_name}`}
        onClick={() => confirm(`Revoke ${g.source_server_name}'s access to ${g.target_server_name}? Its open tunnels close.`) && void revoke()}
      >
        Revoke
      </button>
      {problem("revoke")}
    </span>
  );
}

function ServerChoice({ label, servers, value, onChange }: { label: string; servers: Server[]; value: string; onChange: (id: string) => void }) {
  return (
    <label>
      {label}
      <select required value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        <option value="">Choose a server</option>
        {servers.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </select>
    </label>
  );
}

function NewGrant({ servers, onMade }: { servers: Server[]; onMade: () => void }) {
  const [source, setSource] = useState("");
  const [target, setTarget] = useState("");
  const [level, setLevel] = useState<"standard" | "elevated">("standard");
  const [port, setPort] = useState("22");
  const [lifetime, setLifetime] = useState(86_400);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      await ok(
        hub.POST("/api/v1/access-grants", {
          body: {
            source_server_id: source,
            target_server_id: target,
            privilege_level: level,
            target_port: Number(port),
            expires_in_seconds: lifetime,
          },
        }),
      );
      const name = (id: string) => servers.find((s) => s.id === id)?.name ?? "the server";
      toast(`${name(source)} may now reach ${name(target)}.`);
      onMade();
    } catch (err) {
      setProblem(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel form-row new-grant" onSubmit={(e) => void submit(e)}>
      <h2>New grant</h2>
      <ServerChoice
        label="From (source)"
        servers={servers}
        value={source}
        onChange={(id) => {
          setSource(id);
          if (id === target) setTarget("");
        }}
      />
      {/* A server cannot be granted access to itself: the source is not offered as the target. */}
      <ServerChoice label="To (target)" servers={servers.filter((s) => s.id !== source)} value={target} onChange={setTarget} />
      <label>
        Level
        <select value={level} onChange={(e) => setLevel(e.currentTarget.value as "standard" | "elevated")}>
          <option value="standard">standard</option>
          <option value="elevated">elevated (sudo)</option>
        </select>
      </label>
      <label>
        Target port
        <input type="number" min={1} max={65535} required value={port} onInput={(e) => setPort(e.currentTarget.value)} />
      </label>
      <label>
        For
        <select value={lifetime} onChange={(e) => setLifetime(Number(e.currentTarget.value))}>
          {LIFETIMES.map(([label, seconds]) => (
            <option key={seconds} value={seconds}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy} aria-busy={busy}>
        Grant
      </button>
      <Problem message={problem} />
    </form>
  );
}
