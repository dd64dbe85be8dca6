/** The MCP clients a person authorised through OAuth: listed and revoked by that person only. */
import { Hono } from "hono";
import { z } from "zod";
import { currentUser, signedInPerson } from "../middleware/guards";
import type { HubEnv } from "../http/context";
import { notFound } from "../http/problem";
import { clientGrantsOf, endClientGrant } from "../mcp/client-grants";
import { dropLibraryGrant } from "../mcp/grant-revocation";
import { documented } from "../openapi/operation";
import { mcpClientSchema, mcpClientView } from "../views/mcp-clients";

export const mcpClientRoutes = new Hono<HubEnv>();

mcpClientRoutes.get(
  "/me/mcp-clients",
  documented({
    id: "listMcpClients",
    tag: "Auth",
    summary: "The MCP clients the caller authorised",
    description:
      "The caller's live OAuth authorizations of MCP clients, newest first. A password change revokes them all, as does the account's deletion; " +
      "allowing the same client again replaces its earlier authorization.",
    caller: "person",
    responses: { 200: z.object({ clients: z.array(mcpClientSchema) }) },
  }),
  signedInPerson(),
  async (c) => {
    const grants = await clientGrantsOf(c.var.db, currentUser(c).id, new Date());
    return c.json({ clients: grants.map(mcpClientView) });
  },
);

mcpClientRoutes.delete(
  "/me/mcp-clients/:id",
  documented({
    id: "revokeMcpClient",
    tag: "Auth",
    summary: "Revoke an MCP client",
    description:
      "Revokes one of the caller's authorizations: from then on the client's access token is refused on `/mcp` (401) and its refresh token mints " +
      "nothing (`invalid_grant`). The caller's other clients go on. 404 `NOT_FOUND` for an id that is not one of the caller's.",
    caller: "person",
    params: z.object({ id: z.string().max(128).meta({ description: "The authorization's `id`, as listed" }) }),
    responses: { 204: { description: "Revoked" } },
  }),
  signedInPerson(),
  async (c) => {
    const userId = currentUser(c).id;
    const grantId = c.req.param("id");
    if (!(await endClientGrant(c.var.db, userId, grantId))) throw notFound("MCP client authorization");
    await dropLibraryGrant(c, userId, grantId);
    return c.body(null, 204);
  },
);
