/** SSH access grants as people and daemons see them (API.md "SSH access grants and tunnels"). Never the private key to a person. */
import { z } from "zod";
import { GRANT_STATUSES, PRIVILEGE_LEVELS } from "../db/schema";
import { grantStatusAt, type GrantRow } from "../grants/grant-store";
import { id, timestamp } from "./fields";

export const accessGrantSchema = z
  .object({
    id,
    source_server_id: id,
    source_server_name: z.string(),
    target_server_id: id,
    target_server_name: z.string(),
    project_id: id.meta({ description: "The project both servers serve whose log records the grant's events" }),
    privilege_level: z.enum(PRIVILEGE_LEVELS),
    local_bind_port: z.int().meta({ description: "The port the source's daemon listens on (127.0.0.1): `ssh -p <port> orchestratia@localhost`" }),
    target_port: z.int(),
    ssh_username: z.string(),
    ssh_public_key: z.string().meta({ description: "The `authorized_keys` line the target's daemon installs (ssh-ed25519)" }),
    status: z.enum(GRANT_STATUSES).meta({ description: "`active` until revoked or past `expires_at`" }),
    created_by: z.string(),
    created_at: timestamp,
    expires_at: timestamp,
    ended_at: timestamp.nullable().meta({ description: "When it was revoked or expired" }),
  })
  .meta({ id: "AccessGrant" });

export const accessGrantView = (g: GrantRow): z.infer<typeof accessGrantSchema> => ({
  id: g.id,
  source_server_id: g.source_server_id,
  source_server_name: g.source_server_name,
  target_server_id: g.target_server_id,
  target_server_name: g.target_server_name,
  project_id: g.project_id,
  privilege_level: g.privilege_level,
  local_bind_port: g.local_bind_port,
  target_port: g.target_port,
  ssh_username: g.ssh_username,
  ssh_public_key: g.public_key,
  status: grantStatusAt(g),
  created_by: g.created_by,
  created_at: g.created_at,
  expires_at: g.expires_at,
  ended_at: g.ended_at,
});

const daemonGrantFields = {
  grant_id: id,
  source_server_id: id,
  source_server_name: z.string(),
  target_server_id: id,
  target_server_name: z.string(),
  privilege_level: z.enum(PRIVILEGE_LEVELS),
  local_bind_port: z.int(),
  target_port: z.int(),
  ssh_username: z.string(),
  expires_at: timestamp,
};

/** One entry of `GET /api/v1/server/access-grants`, with the fields hub.py `_reconcile_grants` and cli.py `grants` read. */
export const daemonGrantSchema = z
  .discriminatedUnion("role", [
    z.object({
      role: z.literal("source"),
      ...daemonGrantFields,
      ssh_private_key: z.string().meta({ description: "The OpenSSH private key the daemon stores at ~/.orchestratia/ssh_keys/grant_<id>" }),
    }),
    z.object({ role: z.literal("target"), ...daemonGrantFields, ssh_public_key: z.string() }),
  ])
  .meta({ id: "DaemonAccessGrant" });

/** What an event of the grant records: who, where, until when; never a key. */
export const grantEventData = (g: GrantRow) => ({
  grant_id: g.id,
  source_server_id: g.source_server_id,
  source_server_name: g.source_server_name,
  target_server_id: g.target_server_id,
  target_server_name: g.target_server_name,
  privilege_level: g.privilege_level,
  local_bind_port: g.local_bind_port,
  target_port: g.target_port,
  expires_at: g.expires_at,
});

const daemonGrantCommon = (g: GrantRow) => ({ ...grantEventData(g), ssh_username: g.ssh_username });

export const sourceGrantView = (g: GrantRow, privateKey: string): z.infer<typeof daemonGrantSchema> => ({
  role: "source",
  ...daemonGrantCommon(g),
  ssh_private_key: privateKey,
});

export const targetGrantView = (g: GrantRow): z.infer<typeof daemonGrantSchema> => ({ role: "target", ...daemonGrantCommon(g), ssh_public_key: g.public_key });
