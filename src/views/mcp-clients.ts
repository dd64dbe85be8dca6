/** The MCP clients a person authorised, as the API answers them. */
import { z } from "zod";
import type { ClientGrant } from "../mcp/client-grants";
import { timestamp } from "./fields";

export const mcpClientSchema = z
  .object({
    id: z.string().meta({ description: "The authorization's id: `DELETE /api/v1/auth/me/mcp-clients/{id}` revokes it" }),
    client_id: z.string().meta({ description: "The client's OAuth `client_id`" }),
    client_name: z.string().nullable().meta({ description: "As the client registered itself: not verified" }),
    authorized_at: timestamp.meta({ description: "When the person allowed it" }),
    last_used_at: timestamp
      .nullable()
      .meta({ description: "Its latest request to `/mcp` or the token endpoint, recorded to the minute; null until it exchanged its code" }),
  })
  .meta({ id: "McpClient" });

export const mcpClientView = (g: ClientGrant): z.infer<typeof mcpClientSchema> => ({
  id: g.grantId,
  client_id: g.clientId,
  client_name: g.clientName,
  authorized_at: g.createdAt,
  last_used_at: g.lastUsedAt,
});
