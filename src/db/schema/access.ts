/** SSH access grants between servers. */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects } from "./people";
import { servers } from "./servers";

export const PRIVILEGE_LEVELS = ["standard", "elevated"] as const;
export const GRANT_STATUSES = ["active", "revoked", "expired"] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];

/**
 * SSH access from one server's machine to another's, relayed through the hub (API.md "SSH access grants and
 * tunnels"): the target's daemon installs `public_key` for its `orchestratia` user, the source's daemon keeps the
 * private key and listens on `local_bind_port`. The private key is sealed with DATA_KEY and only ever handed to the
 * source's daemon. `status` stays `active` past `expires_at` until the source's link expires it (its alarm); every
 * check reads `expires_at` too. `project_id` is the project both servers serve whose log records the grant's events.
 */
export const accessGrants = sqliteTable(
  "access_grants",
  {
    id: text("id").primaryKey(),
    sourceServerId: text("source_server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    targetServerId: text("target_server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    privilegeLevel: text("privilege_level", { enum: PRIVILEGE_LEVELS }).notNull(),
    localBindPort: integer("local_bind_port").notNull(),
    targetPort: integer("target_port").notNull(),
    sshUsername: text("ssh_username").notNull(),
    publicKey: text("public_key").notNull(),
    sealedPrivateKey: text("sealed_private_key").notNull(),
    status: text("status", { enum: GRANT_STATUSES }).notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    endedAt: text("ended_at"),
  },
  (t) => [
    // A source's daemon listens on one port per live grant.
    uniqueIndex("access_grants_source_port")
      .on(t.sourceServerId, t.localBindPort)
      .where(sql`status = 'active'`),
    index("access_grants_target").on(t.targetServerId, t.status),
  ],
);
