/**
 * SSH access grants (API.md "SSH access grants and tunnels"): admins let one
 * server's machine reach another's SSH through the hub. The hub makes the key
 * pair, keeps the private key sealed with DATA_KEY, and hands it only to the
 * source's daemon (its push, and its reconciliation list); people never see it.
 */
import { Hono } from "hono";
import { z } from "zod";
import { agent, currentServer, currentUser, person } from "../middleware/guards";
import { seal, unseal } from "../auth/sealed";
import { sshKeyPair } from "../auth/ssh-keys";
import { isUniqueViolation } from "../db/errors";
import { PRIVILEGE_LEVELS } from "../db/schema";
import { grantPush, revokeSourcePush, revokeTargetPush, setupPush } from "../grants/grant-pushes";
import {
  allGrants,
  DEFAULT_GRANT_SECONDS,
  endGrant,
  FIRST_BIND_PORT,
  freeBindPort,
  grantById,
  LAST_BIND_PORT,
  liveGrantsOf,
  MAX_GRANT_SECONDS,
  sharedProjects,
  SSH_USERNAME,
} from "../grants/grant-store";
import { readJson, readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { tcpPort, uuid } from "../http/fields";
import { conflict, fieldError, notFound } from "../http/problem";
import { documented } from "../openapi/operation";
import { runInRoom } from "../room/client";
import { linkStub } from "../server-link/client";
import { accessGrantSchema, accessGrantView, daemonGrantSchema, grantEventData, sourceGrantView, targetGrantView } from "../views/access-grants";

export const accessGrantRoutes = { people: new Hono<HubEnv>(), agents: new Hono<HubEnv>() };

const newGrant = z.object({
  source_server_id: uuid.meta({ description: "The server whose machine may connect" }),
  target_server_id: uuid.meta({ description: "The server whose machine is reached; it must share a project with the source and not be it" }),
  privilege_level: z
    .enum(PRIVILEGE_LEVELS)
    .meta({ description: "`elevated` also gives the `orchestratia` user sudo on the target (the daemon's sudoers file)" }),
  target_port: tcpPort.default(22).meta({ description: "The port on the target's machine (its own 127.0.0.1)" }),
  expires_in_seconds: z
    .int("must be a whole number of seconds")
    .min(60, "must be at least 60 seconds")
    .max(MAX_GRANT_SECONDS, `must be at most ${MAX_GRANT_SECONDS} seconds (30 days)`)
    .default(DEFAULT_GRANT_SECONDS),
  project_id: uuid.optional().meta({ description: "The project whose log records the grant's events: one both servers serve (default: the oldest such)" }),
});

const listQuery = z.object({
  limit: z.coerce.number().int("must be a whole number").min(1, "must be at least 1").max(500, "must be at most 500").default(200),
});

/** The scopes of two servers, 422 naming the field of one that does not exist or whose key was revoked. */
async function serverScopes(db: D1Database, body: z.infer<typeof newGrant>) {
  const rows = await db
    .prepare("SELECT id, project_ids, revoked_at FROM servers WHERE id IN (?1, ?2)")
    .bind(body.source_server_id, body.target_server_id)
    .all<{ id: string; project_ids: string | null; revoked_at: string | null }>();
  const scope = (id: string, field: string) => {
    const row = rows.results.find((r) => r.id === id);
    if (!row) throw fieldError(field, "must name a registered server");
    if (row.revoked_at) throw fieldError(field, "must name a server whose API key is not revoked");
    return row.project_ids === null ? null : (JSON.parse(row.project_ids) as string[] | null);
  };
  return { source: scope(body.source_server_id, "source_server_id"), target: scope(body.target_server_id, "target_server_id") };
}

accessGrantRoutes.people.post(
  "/",
  documented({
    id: "createAccessGrant",
    tag: "Access grants",
    summary: "Grant one server's machine SSH access to another's (admins)",
    description:
      "The hub makes an Ed25519 key pair for the grant and pushes `setup_ssh_access` (the public key) to the target's daemon and " +
      "`grant_ssh_access` (the private key, `local_bind_port`, `target_port`) to the source's; a daemon that is away picks the grant up from " +
      "`GET /api/v1/server/access-grants` when it connects. The source's machine then reaches the target with " +
      "`ssh -i ~/.orchestratia/ssh_keys/grant_<id> -p <local_bind_port> orchestratia@localhost`, relayed through the hub. " +
      `\`local_bind_port\` is the lowest port from ${FIRST_BIND_PORT} to ${LAST_BIND_PORT} no live grant of the source holds. ` +
      "422 naming the field: a server that does not exist or whose key was revoked, a target that is the source, servers that share no project, a port outside " +
      "1–65535, an expiry over 30 days. The private key is never answered; it is kept sealed with DATA_KEY (503 `NOT_CONFIGURED` without it). " +
      "The grant is the event `access_granted` in the log of `project_id`.",
    caller: "person",
    body: newGrant,
    bodyRequired: true,
    responses: { 201: accessGrantSchema },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, newGrant);
    if (body.target_server_id === body.source_server_id) throw fieldError("target_server_id", "must be another server than source_server_id");
    const db = c.env.DB;
    const scopes = await serverScopes(db, body);
    const shared = await sharedProjects(db, scopes.source, scopes.target);
    if (shared.length === 0) throw fieldError("target_server_id", "must share a project with the source server");
    if (body.project_id !== undefined && !shared.includes(body.project_id)) throw fieldError("project_id", "must be a project both servers serve");
    const projectId = body.project_id ?? shared[0]!;
    const id = crypto.randomUUID();
    const keys = await sshKeyPair(`orchestratia-grant-${id}`);
    const sealed = await seal(c.env.DATA_KEY, keys.privateKey);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + body.expires_in_seconds * 1000).toISOString();
    // Two grants made at once for one source may pick the same port: the partial unique index lets one in, the other tries the next.
    let inserted = false;
    for (let attempt = 0; attempt < 5 && !inserted; attempt++) {
      const bindPort = await freeBindPort(db, body.source_server_id);
      if (bindPort === null) throw conflict(`The source server holds a live grant on every port from ${FIRST_BIND_PORT} to ${LAST_BIND_PORT}`, "CONFLICT");
      try {
        await db
          .prepare(
            `INSERT INTO access_grants (id, source_server_id, target_server_id, project_id, privilege_level, local_bind_port, target_port, ssh_username,
               public_key, sealed_private_key, status, created_by, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'active', ?11, ?12, ?13)`,
          )
          .bind(
            id,
            body.source_server_id,
            body.target_server_id,
            projectId,
            body.privilege_level,
            bindPort,
            body.target_port,
            SSH_USERNAME,
            keys.publicKey,
            sealed,
            currentUser(c).email,
            now.toISOString(),
            expiresAt,
          )
          .run();
        inserted = true;
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
    }
    if (!inserted) throw conflict("Other grants for the source server were made at the same moment: try again", "CONFLICT");
    const grant = (await grantById(db, id))!;
    await runInRoom(c, projectId, { op: "access_use", event: "access_granted", data: grantEventData(grant) });
    await linkStub(c.env, grant.target_server_id).notifyConnected(setupPush(grant));
    await linkStub(c.env, grant.source_server_id).grantMade(grant.id, Date.parse(expiresAt), grantPush(grant, keys.privateKey));
    return c.json(accessGrantView(grant), 201);
  },
);

accessGrantRoutes.people.get(
  "/",
  documented({
    id: "listAccessGrants",
    tag: "Access grants",
    summary: "Every SSH access grant, newest first (admins)",
    description: "Live, revoked and expired grants, with each one's status; never a private key.",
    caller: "person",
    query: listQuery,
    responses: { 200: z.object({ grants: z.array(accessGrantSchema) }) },
  }),
  person("admin"),
  async (c) => {
    const { limit } = readQuery(c, listQuery);
    return c.json({ grants: (await allGrants(c.env.DB, limit)).map(accessGrantView) });
  },
);

accessGrantRoutes.people.delete(
  "/:id",
  documented({
    id: "revokeAccessGrant",
    tag: "Access grants",
    summary: "Revoke an SSH access grant (admins)",
    description:
      "The grant ends at once: its open tunnels close (`tunnel_close` to both daemons), the target's daemon is told to remove the public key " +
      "(`revoke_ssh_access`, held until it connects) and the source's to stop listening and delete the private key (`revoke_grant_access`; " +
      "a daemon that missed it drops the grant at its next reconciliation). The event `access_revoked` is recorded. A grant that already " +
      "ended is answered as it is, and nothing changes.",
    caller: "person",
    params: z.object({ id: uuid }),
    responses: { 200: accessGrantSchema },
  }),
  person("admin"),
  async (c) => {
    const id = c.req.param("id");
    if (!uuid.safeParse(id).success) throw notFound("Access grant");
    const ended = await endGrant(c.env.DB, id, "revoked");
    if (!ended) {
      const grant = await grantById(c.env.DB, id);
      if (!grant) throw notFound("Access grant");
      return c.json(accessGrantView(grant));
    }
    await runInRoom(c, ended.project_id, { op: "access_use", event: "access_revoked", data: grantEventData(ended) });
    await linkStub(c.env, ended.target_server_id).push([revokeTargetPush(id)]);
    await linkStub(c.env, ended.source_server_id).grantEnded(id, "the access grant was revoked", revokeSourcePush(id));
    return c.json(accessGrantView(ended));
  },
);

accessGrantRoutes.agents.get(
  "/access-grants",
  documented({
    id: "daemonAccessGrants",
    tag: "Access grants",
    summary: "The live grants this server takes part in (the daemon's reconciliation)",
    description:
      "hub.py `_reconcile_grants` (on every connect and every 60 s) and `orchestratia grants`: a JSON array, one entry per live grant, with " +
      "`role: source` (and `ssh_private_key`, `local_bind_port`) or `role: target` (and `ssh_public_key`). Revoked and expired grants are " +
      "left out, so the daemon tears their listeners down.",
    caller: "agent",
    responses: { 200: z.array(daemonGrantSchema) },
  }),
  agent,
  async (c) => {
    const me = currentServer(c).id;
    const grants = await liveGrantsOf(c.env.DB, me);
    const entries = await Promise.all(
      grants.map(async (g) => (g.source_server_id === me ? sourceGrantView(g, await unseal(c.env.DATA_KEY, g.sealed_private_key)) : targetGrantView(g))),
    );
    return c.json(entries);
  },
);
