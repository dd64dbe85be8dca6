/**
 * The MCP clients the person allowed through OAuth, on the account page: each named as it registered itself, when it
 * was allowed and last used, with a button that revokes it.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { McpClient } from "../types";
import { Problem, useAction } from "./controls";
import { absoluteTime } from "../time-format";

const readClients = () => ok(hub.GET("/api/v1/auth/me/mcp-clients")).then((r) => r.clients);

const when = (iso: string) => <time dateTime={iso}>{absoluteTime(iso)}</time>;

export function McpClientsSection() {
  const [clients, setClients] = useState<McpClient[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => void readClients().then(setClients, (e) => setError(messageOf(e)));
  useEffect(load, []);

  return (
    <section class="panel mcp-clients" aria-labelledby="mcp-clients-title">
      <h2 id="mcp-clients-title">MCP clients</h2>
      <p class="muted">
        Applications you allowed to work as you through <code>/mcp</code>. Revoking one stops it at once; changing your password revokes them all.
      </p>
      <Problem message={error} />
      {clients?.length === 0 && <p class="muted">None.</p>}
      {clients && clients.length > 0 && (
        <table class="mcp-clients">
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Allowed</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {clients.map((c) => (
              <ClientRow key={c.id} client={c} onRevoked={load} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function ClientRow({ client: c, onRevoked }: { client: McpClient; onRevoked: () => void }) {
  const { run, busy, problem } = useAction();
  const name = c.client_name ?? "An unnamed client";
  const revoke = () =>
    run("revoke", async () => {
      await ok(hub.DELETE("/api/v1/auth/me/mcp-clients/{id}", { params: { path: { id: c.id } } }));
      onRevoked();
    });
  return (
    <tr data-mcp-client={c.id}>
      {/* The name is the client's own claim: shown as text, never as a link. */}
      <th scope="row">{name}</th>
      <td data-label="Allowed">{when(c.authorized_at)}</td>
      <td data-label="Last used">{c.last_used_at ? when(c.last_used_at) : <span class="muted">not yet</span>}</td>
      <td class="revoke-cell">
        <span class="action">
          <button
            type="button"
            class="danger"
            disabled={busy !== null}
            onClick={() => confirm(`Revoke ${name}? It can no longer work as you until you allow it again.`) && void revoke()}
          >
            Revoke
          </button>
          {problem("revoke")}
        </span>
      </td>
    </tr>
  );
}
