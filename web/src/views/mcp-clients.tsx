/**
 * The MCP clients the person allowed through OAuth, on the account page: each named as it registered itself, when it
 * was allowed and last used, with a button that revokes it.
 */
import { When } from "../ui/when";
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { McpClient } from "../types";
import { DataTable } from "../ui/data-table";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useAction } from "./controls";

const readClients = () => ok(hub.GET("/api/v1/auth/me/mcp-clients")).then((r) => r.clients);

export function McpClientsSection() {
  const [clients, setClients] = useState<McpClient[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void readClients().then(
      (c) => (setClients(c), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, []);

  return (
    <section class="panel mcp-clients" aria-labelledby="mcp-clients-title">
      <h2 id="mcp-clients-title">MCP clients</h2>
      <p class="muted">
        Applications you allowed to work as you through <code>/mcp</code>. Revoking one stops it at once; changing your password revokes them all.
      </p>
      {clients === null ? (
        error ? (
          <Failed what="your MCP clients" message={error} retry={load} />
        ) : (
          <Loading what="MCP clients" />
        )
      ) : clients.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <DataTable
          class="mcp-clients"
          label="MCP clients"
          rows={clients}
          rowKey={(c) => c.id}
          rowAttributes={(c) => ({ "data-mcp-client": c.id })}
          columns={[
            // The name is the client's own claim: shown as text, never as a link.
            { label: "Client", rowHeader: true, cell: nameOf },
            { label: "Allowed", cell: (c) => <When iso={c.authorized_at} /> },
            { label: "Last used", cell: (c) => (c.last_used_at ? <When iso={c.last_used_at} /> : <span class="muted">not yet</span>) },
            { label: "Actions", actions: true, cell: (c) => <RevokeClient client={c} onRevoked={load} /> },
          ]}
        />
      )}
    </section>
  );
}

const nameOf = (c: McpClient) => c.client_name ?? "An unnamed client";

function RevokeClient({ client: c, onRevoked }: { client: McpClient; onRevoked: () => void }) {
  const { run, busy, problem } = useAction();
  const name = nameOf(c);
  const revoke = () =>
    run("revoke", async () => {
      await ok(hub.DELETE("/api/v1/auth/me/mcp-clients/{id}", { params: { path: { id: c.id } } }));
      toast(`Revoked ${name}.`);
      onRevoked();
    });
  return (
    <span class="action">
      <button
        type="button"
        class="danger"
        disabled={busy !== null}
        aria-busy={busy !== null}
        onClick={() => confirm(`Revoke ${name}? It can no longer work as you until you allow it again.`) && void revoke()}
      >
        Revoke
      </button>
      {problem("revoke")}
    </span>
  );
}
