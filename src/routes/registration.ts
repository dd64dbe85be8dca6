/** Registration tokens (issued by admins) and agent registration with them. */
import { mirrorServer } from "../db/shard-mirrors";
import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { API_KEY_PREFIX, apiKeyOf, bearerToken, currentUser, person, signInWithToken } from "../middleware/guards";
import { rekeyRefusal, type RekeyProof } from "../auth/rekey";
import { isHubAdmin } from "../auth/token-limits";
import { formatRegistrationToken, parseRegistrationToken } from "../auth/registration-token";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { nowIso, type ServerRow } from "../db/client";
import { projects, registrationTokens, servers } from "../db/schema";
import { HUB_PROTOCOL_VERSIONS, protocolRefusal, UNDECLARED_PROTOCOL_WARNING } from "../domain/protocol-version";
import { readJson } from "../http/body";
import { idempotencyKeyOf, runIdempotently } from "../middleware/idempotency";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { label, serverJson, uuid } from "../http/fields";
import { conflict, fieldError, notFound, Problem, unauthorized } from "../http/problem";
import { capabilitiesSchema } from "../protocol/orchestratia-v1";
import { capabilitiesWarnings, withWarnings } from "../protocol/schema-id";
import { announceOnline, refuseKeyInRooms, shutdownServer } from "../room/client";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { registrationTokenSchema, tokenStatus, tokenView, warnings } from "../views/agents";

export const registrationRoutes = new Hono<HubEnv>();

type TokenRow = typeof registrationTokens.$inferSelect;

const newToken = z.object({
  name: label().optional(),
  expires_in_seconds: z
    .int("must be an integer")
    .min(60, "must be at least 60")
    .max(365 * 86400, "must be at most a year")
    .default(86400),
  max_uses: z.int("must be an integer").min(1, "must be at least 1").max(10_000).default(1),
  project_ids: z
    .array(uuid)
    .min(1, "give at least one project, or leave it out for all")
    .max(50)
    .optional()
    .meta({ description: "The projects servers registered with it serve; left out: every project" }),
});

const issuedToken = registrationTokenSchema.extend({
  token: z.string().meta({ description: "`orcreg_<base64url(hub_url)>.<secret>`: shown this once, kept only as a digest" }),
  hub_url: z.string().meta({ description: "The hub's address, as the token carries it" }),
});

registrationRoutes.post(
  "/tokens",
  documented({
    id: "createRegistrationToken",
    tag: "Servers",
    summary: "Create a registration token",
    description:
      "Issue a registration token for agents' servers (admins).\n\n" +
      "The token is in the answer only: a repeat under the same `Idempotency-Key` is refused (409 `IDEMPOTENT_SECRET_NOT_REPLAYED`) " +
      "rather than handing it out again. 422 names `project_ids` when one of them is not a project.",
    caller: "person",
    body: newToken,
    bodyRequired: false,
    responses: { 201: issuedToken },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, newToken);
    if (body.project_ids) {
      const found = await c.var.db.select({ id: projects.id }).from(projects).where(inArray(projects.id, body.project_ids));
      const missing = body.project_ids.filter((id) => !found.some((p) => p.id === id));
      if (missing.length) throw fieldError("project_ids", `no such project: ${missing.join(", ")}`);
    }
    const hubUrl = hubBaseUrl(c);
    const token = formatRegistrationToken(hubUrl);
    const now = Date.now();
    const row: TokenRow = {
      id: crypto.randomUUID(),
      name: body.name ?? null,
      tokenHash: await sha256Hex(token),
      expiresAt: new Date(now + body.expires_in_seconds * 1000).toISOString(),
      maxUses: body.max_uses,
      uses: 0,
      projectIds: body.project_ids ? [...new Set(body.project_ids)] : null,
      createdBy: currentUser(c).id,
      createdAt: new Date(now).toISOString(),
      revokedAt: null,
    };
    await c.var.db.insert(registrationTokens).values(row);
    // The token is shown once: a replay under the same Idempotency-Key must not hand it out again.
    c.set("secretResponse", "once");
    return c.json({ ...tokenView(row), token, hub_url: hubUrl } satisfies z.infer<typeof issuedToken>, 201);
  },
);

registrationRoutes.get(
  "/tokens",
  documented({
    id: "listRegistrationTokens",
    tag: "Servers",
    summary: "Registration tokens, newest first (admins)",
    caller: "person",
    responses: { 200: z.object({ tokens: z.array(registrationTokenSchema) }) },
  }),
  person("admin"),
  async (c) => {
    const rows = await c.var.db.select().from(registrationTokens).orderBy(desc(registrationTokens.createdAt));
    return c.json({ tokens: rows.map(tokenView) });
  },
);

registrationRoutes.delete(
  "/tokens/:id",
  documented({
    id: "revokeRegistrationToken",
    tag: "Servers",
    summary: "Revoke a registration token",
    description: "Revoke a registration token (admins); servers registered with it keep their keys.\n\n" + "Revoking again answers the token as it is.",
    caller: "person",
    responses: { 200: registrationTokenSchema },
  }),
  person("admin"),
  async (c) => {
    const [row] = await c.var.db
      .update(registrationTokens)
      .set({ revokedAt: nowIso() })
      .where(eq(registrationTokens.id, c.req.param("id")))
      .returning();
    if (!row) throw notFound("Registration token");
    return c.json(tokenView(row));
  },
);

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/** Exactly what the official daemon sends, plus capabilities and protocol_versions. */
const registerBody = z.looseObject({
  name: label(),
  hostname: label(255),
  ip: text(64).nullish(),
  os: text(64).nullish(),
  repos: serverJson(z.union([z.record(z.string().max(200), z.unknown()), z.array(z.string().max(200))])).nullish(),
  system_info: serverJson(z.record(z.string(), z.unknown())).nullish(),
  capabilities: serverJson(capabilitiesSchema).nullish(),
  registration_token: z.string().min(1, "must not be empty").max(1024),
  machine_id: text(255).nullish(),
  mac_address: text(64).nullish(),
  protocol_versions: z.array(text(64)).max(20).nullish(),
});

/** What this registration shows of being the server registered under its name already. */
async function rekeyProof(c: HubContext, existing: ServerRow, machineId: string | null | undefined, scope: string[] | null): Promise<RekeyProof> {
  const token = bearerToken(c);
  const byAdmin = token !== undefined && !token.startsWith(API_KEY_PREFIX) && (await signInWithToken(c, token), isHubAdmin(c.var.principal));
  const apiKey = apiKeyOf(c);
  return {
    byAdmin,
    tokenCovers: scope === null || (existing.projectIds != null && existing.projectIds.every((id) => scope.includes(id))),
    sameMachine: Boolean(existing.machineId && machineId && existing.machineId === machineId),
    otherMachine: Boolean(existing.machineId && machineId && existing.machineId !== machineId),
    currentKey: apiKey !== undefined && !existing.revokedAt && existing.apiKeyHash === (await sha256Hex(apiKey)),
  };
}

/**
 * Registration honours Idempotency-Key (compute protocol: safe retries): the
 * same key and body again answer the same server and the same API key, even
 * once the token is used up. The keys are the registration token's (there is
 * no principal yet), and the stored answer is sealed: it holds the API key.
 */
const registered = z.object({
  id,
  server_id: id.meta({ description: "The same as `id`" }),
  name: z.string(),
  api_key: z.string().meta({ description: "`orc_...`: the server's credential from now on (`X-API-Key`); kept only as a digest" }),
  warnings,
});

registrationRoutes.post(
  "/register",
  documented({
    id: "registerServer",
    tag: "Servers",
    summary: "Register a server",
    description:
      "Register an agent's server with a registration token, for its API key.\n\n" +
      [
        "No credentials: the registration token in the body is the authority; each registration spends one of its uses.",
        "401 `INVALID_REGISTRATION_TOKEN` for a malformed, unknown, revoked, expired or used-up token (`detail` says which). " +
          "422 `INCOMPATIBLE_PROTOCOL` when none of `protocol_versions` is spoken here (`[]` included); left out, the server speaks orchestratia/v1 and the answer says so in `warnings`. `system_info`, `capabilities` and `repos` hold no " +
          "DataRef pointer (a server belongs to no project): 422 naming it.",
        "**Re-keying.** Registering a name that exists re-keys that server: its old key stops working and agents still connected with " +
          "it are told to stop. Only the server itself may: the same `machine_id`, or its current API key sent as `X-API-Key`; an admin " +
          "(`Authorization: Bearer <jwt>`) may re-key any server. Otherwise, or when the token does not cover every project the server " +
          "serves, 409 `SERVER_NAME_TAKEN`.",
        "**Retries.** With `Idempotency-Key` (needs the `DATA_KEY` secret, else 503) the same key and body answer the same server and " +
          "API key again, even once the token is used up; 409 `IDEMPOTENT_REGISTRATION_STALE` when that answer no longer holds " +
          "(the token revoked, or the server removed or re-keyed since).",
      ].join("\n\n"),
    // The registration token in the body is what authorises it; a server's API key or an admin's token only proves a re-key.
    caller: ["anyone", "agent", "person"],
    body: registerBody,
    headers: { "Idempotency-Key": "Makes a retry safe: the same key and body answer the first registration again" },
    responses: { 201: registered },
  }),
  async (c) => {
    const key = idempotencyKeyOf(c);
    const token = key === undefined ? undefined : registrationTokenIn(await c.req.text());
    // Without a token the handler says what is wrong with the body.
    if (key === undefined || token === undefined) return register(c);
    if (!c.env.DATA_KEY)
      throw new Problem(
        503,
        "NOT_CONFIGURED",
        "The hub has no DATA_KEY secret to keep a registration's answer for replay: set it, or register without Idempotency-Key",
      );
    const tokenHash = await sha256Hex(token);
    const answer = await runIdempotently(c, { caller: `registration:${tokenHash}`, key, sealed: true }, () => register(c));
    if (answer.headers.get("Idempotent-Replayed") === "true") await assertReplayHolds(c, answer, tokenHash);
    return answer;
  },
);

/**
 * A replayed registration hands out its API key again only while that still
 * means something: the token not revoked since, and the server still holding
 * that very key (not removed, revoked or re-keyed).
 */
async function assertReplayHolds(c: HubContext, answer: Response, tokenHash: string) {
  const { server_id, api_key } = (await answer.clone().json()) as { server_id?: string; api_key?: string };
  const token = await c.var.db.query.registrationTokens.findFirst({ where: eq(registrationTokens.tokenHash, tokenHash), columns: { revokedAt: true } });
  const server = server_id
    ? await c.var.db.query.servers.findFirst({ where: eq(servers.id, server_id), columns: { apiKeyHash: true, revokedAt: true } })
    : undefined;
  const holds = token && !token.revokedAt && server && !server.revokedAt && typeof api_key === "string" && server.apiKeyHash === (await sha256Hex(api_key));
  if (!holds) {
    throw conflict(
      "The registration this Idempotency-Key answered no longer holds (its token was revoked, or the server was removed or re-keyed since); register again with a new key",
      "IDEMPOTENT_REGISTRATION_STALE",
    );
  }
}

function registrationTokenIn(raw: string): string | undefined {
  try {
    const token = (JSON.parse(raw) as { registration_token?: unknown } | null)?.registration_token;
    return typeof token === "string" && token.length > 0 ? token : undefined;
  } catch {
    return undefined;
  }
}

async function register(c: HubContext): Promise<Response> {
  const body = await readJson(c, registerBody);
  const protocolVersions = body.protocol_versions ?? undefined;
  const refusal = protocolRefusal(protocolVersions);
  if (refusal) {
    throw new Problem(
      422,
      "INCOMPATIBLE_PROTOCOL",
      `None of the protocol versions ${JSON.stringify(protocolVersions)} is spoken here; the hub speaks ${HUB_PROTOCOL_VERSIONS.join(", ")}`,
      [{ path: "protocol_versions", message: refusal }],
    );
  }
  if (!parseRegistrationToken(body.registration_token)) {
    throw unauthorized("The registration token is malformed: expected orcreg_<hub>.<secret>", "INVALID_REGISTRATION_TOKEN");
  }

  const tokenHash = await sha256Hex(body.registration_token);
  const token = await c.var.db.query.registrationTokens.findFirst({ where: eq(registrationTokens.tokenHash, tokenHash) });
  if (!token) throw unauthorized("The registration token is not recognised; ask an admin for a new one", "INVALID_REGISTRATION_TOKEN");

  const existing = await c.var.db.query.servers.findFirst({ where: eq(servers.name, body.name) });
  if (existing) {
    const refusal = rekeyRefusal(body.name, await rekeyProof(c, existing, body.machine_id, token.projectIds ?? null));
    if (refusal) throw conflict(refusal, "SERVER_NAME_TAKEN");
  }

  // Spend one use atomically: concurrent registrations cannot exceed max_uses.
  const now = nowIso();
  const spent = await c.env.DB.prepare(
    `UPDATE registration_tokens SET uses = uses + 1
     WHERE id = ?1 AND revoked_at IS NULL AND expires_at > ?2 AND uses < max_uses
     RETURNING id, project_ids`,
  )
    .bind(token.id, now)
    .first<{ id: string; project_ids: string | null }>();
  if (!spent) {
    const why = { revoked: "has been revoked", expired: "has expired", used_up: "has been used up", active: "could not be used" }[tokenStatus(token)];
    throw unauthorized(`The registration token ${why}; ask an admin for a new one`, "INVALID_REGISTRATION_TOKEN");
  }

  const apiKey = randomSecret(API_KEY_PREFIX);
  const fields = {
    hostname: body.hostname,
    ip: body.ip ?? null,
    os: body.os ?? null,
    repos: body.repos ?? {},
    systemInfo: body.system_info ?? null,
    capabilities: body.capabilities ?? null,
    protocolVersions: protocolVersions ?? null,
    machineId: body.machine_id || null,
    macAddress: body.mac_address || null,
    apiKeyHash: await sha256Hex(apiKey),
    apiKeyPrefix: apiKey.slice(0, API_KEY_PREFIX.length + 6),
    projectIds: spent.project_ids ? (JSON.parse(spent.project_ids) as string[]) : null,
    registrationTokenId: spent.id,
    lastHeartbeat: now,
    updatedAt: now,
    revokedAt: null,
  };
  // Registering a name that exists re-keys that server: the old key stops working. Its rooms refuse it first (the
  // Worker may still answer it from a recent lookup), and the key is replaced only if it is still the one they were
  // told of and the server is still the one whose proof was checked.
  if (existing) await refuseKeyInRooms(c.env, { projectIds: existing.projectIds ?? null, keyHash: existing.apiKeyHash });
  const [server] = await c.var.db
    .insert(servers)
    .values({ id: crypto.randomUUID(), name: body.name, createdAt: now, ...fields })
    .onConflictDoUpdate({
      target: servers.name,
      set: fields,
      setWhere: existing
        ? and(eq(servers.id, existing.id), existing.apiKeyHash === null ? isNull(servers.apiKeyHash) : eq(servers.apiKeyHash, existing.apiKeyHash))
        : sql`0`,
    })
    .returning();
  if (!server) throw conflict(`A server named "${body.name}" registered or was revoked meanwhile; register again`, "SERVER_NAME_TAKEN");
  await mirrorServer(c.env, server.id);
  c.executionCtx.waitUntil(announceOnline(c.env, { id: server.id, name: server.name, projectIds: server.projectIds ?? null }));
  // Agents still connected with the replaced key are told to stop.
  if (existing) {
    const old = { id: existing.id, projectIds: existing.projectIds ?? null, keyHash: existing.apiKeyHash };
    c.executionCtx.waitUntil(shutdownServer(c.env, old, "the server registered again; its old API key no longer works", "replaced"));
  }
  const answer: z.infer<typeof registered> = {
    id: server.id,
    server_id: server.id,
    name: server.name,
    api_key: apiKey,
    ...withWarnings([...(protocolVersions === undefined ? [UNDECLARED_PROTOCOL_WARNING] : []), ...capabilitiesWarnings(body.capabilities)]),
  };
  return c.json(answer, 201);
}
