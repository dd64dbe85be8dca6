/**
 * Invites: an admin hands out a link that makes one account (with a role, and the projects it joins), single use and
 * expiring. The link's token is shown once and kept as a digest; whoever opens the link sets their name and password.
 */
import { and, desc, eq, gt, inArray, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { hashPassword } from "../auth/password";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { issueTokenPair } from "../auth/token-pair";
import { nowIso, type Db } from "../db/client";
import { invites, PROJECT_ROLES, projects, users } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { email, label, password, role, uuid } from "../http/fields";
import { conflict, fieldError, forbidden, notFound, Problem } from "../http/problem";
import { currentUser, person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { invitedProjects, invitePreviewSchema, inviteSchema, inviteView, newInviteSchema } from "../views/invites";
import { answerSignIn, REFRESH_COOKIE_HEADER, refreshCookieField, signedIn, throttleGuesses } from "./auth";

export const inviteRoutes = new Hono<HubEnv>();

type InviteRow = typeof invites.$inferSelect;

const INVITE_PREFIX = "orci_";
const DEFAULT_TTL_SECONDS = 7 * 86400;
/** The dashboard's page that accepts an invite (web/src/router.ts). */
const ACCEPT_PAGE = "/invite";

const newInvite = z.object({
  role,
  projects: z
    .array(z.object({ project_id: uuid, role: z.enum(PROJECT_ROLES).default("member").meta({ description: "Left out: member" }) }))
    .max(50, "must name at most 50 projects")
    .refine((ps) => new Set(ps.map((p) => p.project_id)).size === ps.length, "must name each project once")
    .default([]),
  email: email.optional().meta({ description: "Only this address may accept the invite" }),
  expires_in_seconds: z
    .int("must be an integer")
    .min(60, "must be at least 60")
    .max(30 * 86400, "must be at most 30 days")
    .default(DEFAULT_TTL_SECONDS),
});

const tokenField = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");
const acceptQuery = z.object({ token: tokenField });
const acceptBody = z.object({ token: tokenField, email, name: label(), password, refresh_cookie: refreshCookieField });

const gone = () => new Problem(410, "INVITE_GONE", "This invite link was used already, has expired or was withdrawn: ask an admin for a new one");

/** Names of these projects that exist. */
async function projectNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.select({ id: projects.id, name: projects.name }).from(projects).where(inArray(projects.id, ids));
  return new Map(rows.map((r) => [r.id, r.name]));
}

const isLive = (row: InviteRow, now: string) => row.acceptedAt === null && row.expiresAt > now;

/** The invite whose token this is, while it can still be accepted; 410 `INVITE_GONE` otherwise (unknown tokens alike). */
async function liveInvite(c: HubContext, token: string): Promise<InviteRow> {
  // Each look-up is a guess at a token: counted like a password guess, from the caller's address.
  await throttleGuesses(c, [], "invite attempts");
  const row = await c.var.db.query.invites.findFirst({ where: eq(invites.tokenHash, await sha256Hex(token)) });
  if (!row || !isLive(row, nowIso())) throw gone();
  return row;
}

inviteRoutes.post(
  "/",
  documented({
    id: "createInvite",
    tag: "Users",
    summary: "Invite someone by link (admins)",
    description:
      "Makes a link that creates one account with `role`, joining `projects` with their role there (member or viewer, which lowers, never " +
      "raises, `role`). Single use; it expires after `expires_in_seconds` (a week when left out). With `email`, only that address may accept. " +
      "The token is shown once, here: the hub keeps its digest. 422 naming `projects.N.project_id` for a project that does not exist.",
    caller: "person",
    body: newInvite,
    responses: { 201: newInviteSchema },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, newInvite);
    const names = await projectNames(
      c.var.db,
      body.projects.map((p) => p.project_id),
    );
    const missing = body.projects.findIndex((p) => !names.has(p.project_id));
    if (missing >= 0) throw fieldError(`projects.${missing}.project_id`, "is not a project");
    const token = randomSecret(INVITE_PREFIX);
    const now = new Date();
    const [row] = await c.var.db
      .insert(invites)
      .values({
        id: crypto.randomUUID(),
        tokenHash: await sha256Hex(token),
        role: body.role,
        projects: body.projects,
        email: body.email ?? null,
        expiresAt: new Date(now.getTime() + body.expires_in_seconds * 1000).toISOString(),
        createdBy: currentUser(c).id,
        createdAt: now.toISOString(),
      })
      .returning();
    const url = `${hubBaseUrl(c)}${ACCEPT_PAGE}?token=${encodeURIComponent(token)}`;
    return c.json({ ...inviteView(row!, names), token, url }, 201);
  },
);

inviteRoutes.get(
  "/",
  documented({
    id: "listInvites",
    tag: "Users",
    summary: "Pending invites (admins)",
    description: "Invites not yet accepted nor expired, newest first; their tokens are never shown again.",
    caller: "person",
    responses: { 200: z.object({ invites: z.array(inviteSchema) }) },
  }),
  person("admin"),
  async (c) => {
    const rows = await c.var.db
      .select()
      .from(invites)
      .where(and(isNull(invites.acceptedAt), gt(invites.expiresAt, nowIso())))
      .orderBy(desc(invites.createdAt));
    const names = await projectNames(c.var.db, [...new Set(rows.flatMap((r) => r.projects.map((p) => p.project_id)))]);
    return c.json({ invites: rows.map((r) => inviteView(r, names)) });
  },
);

inviteRoutes.get(
  "/accept",
  documented({
    id: "previewInvite",
    tag: "Users",
    summary: "What an invite link offers",
    description:
      "No sign-in: the token is the credential. 410 `INVITE_GONE` when it was used, has expired or was withdrawn (or never existed); " +
      "429 with `Retry-After` after too many attempts from the address (counted with sign-ins).",
    caller: "anyone",
    query: acceptQuery,
    responses: { 200: invitePreviewSchema },
  }),
  async (c) => {
    const row = await liveInvite(c, readQuery(c, acceptQuery).token);
    const names = await projectNames(
      c.var.db,
      row.projects.map((p) => p.project_id),
    );
    return c.json({
      role: row.role,
      projects: invitedProjects(row, names).map((p) => ({ id: p.project_id, name: p.name, role: p.role })),
      email: row.email,
      expires_at: row.expiresAt,
    });
  },
);

inviteRoutes.post(
  "/accept",
  documented({
    id: "acceptInvite",
    tag: "Users",
    summary: "Accept an invite: make the account and sign in",
    description:
      "No sign-in: the token is the credential. Creates the account with the invite's role and projects and answers as `POST /api/v1/auth/login` " +
      "does (`refresh_cookie` too). Of concurrent accepts of one invite exactly one succeeds; the others get 410 `INVITE_GONE`, as does a used, " +
      "expired or withdrawn invite. 403 `INVITE_EMAIL_MISMATCH` when the invite names another address; 409 `EMAIL_TAKEN` when an account has " +
      "the address (the invite stays usable). 429 with `Retry-After` after too many attempts from the address (counted with sign-ins).",
    caller: "anyone",
    body: acceptBody,
    responses: { 201: { description: "The account was made and signed in", schema: signedIn, headers: { "Set-Cookie": REFRESH_COOKIE_HEADER } } },
  }),
  async (c) => {
    const body = await readJson(c, acceptBody);
    const invite = await liveInvite(c, body.token);
    if (invite.email && invite.email !== body.email) {
      throw forbidden(`This invite is for ${invite.email}: accept it with that address`, "INVITE_EMAIL_MISMATCH");
    }
    const taken = () => conflict(`A user with email ${body.email} already exists: sign in instead`, "EMAIL_TAKEN");
    if (await c.var.db.query.users.findFirst({ columns: { id: true }, where: eq(users.email, body.email) })) throw taken();
    const userId = crypto.randomUUID();
    const now = nowIso();
    const hash = await hashPassword(body.password);
    // One batch, one transaction: the account exists only if the invite was still open, the invite is spent only if
    // the account was made (an address taken meanwhile spends nothing), and the projects are joined only by the winner.
    const [made] = await c.env.DB.batch([
      c.env.DB.prepare(
        `INSERT INTO users (id, email, name, role, password_hash, created_at, updated_at)
         SELECT ?1, ?2, ?3, i.role, ?4, ?5, ?5 FROM invites i WHERE i.id = ?6 AND i.accepted_at IS NULL AND i.expires_at > ?5
         ON CONFLICT (email) DO NOTHING`,
      ).bind(userId, body.email, body.name, hash, now, invite.id),
      c.env.DB.prepare(
        "UPDATE invites SET accepted_at = ?3, accepted_by = ?2 WHERE id = ?1 AND accepted_at IS NULL AND EXISTS (SELECT 1 FROM users WHERE id = ?2)",
      ).bind(invite.id, userId, now),
      c.env.DB.prepare(
        `INSERT INTO project_members (project_id, user_id, role, created_at)
         SELECT p.id, ?2, j.value ->> '$.role', ?3 FROM invites i, json_each(i.projects) j JOIN projects p ON p.id = j.value ->> '$.project_id'
         WHERE i.id = ?1 AND i.accepted_by = ?2`,
      ).bind(invite.id, userId, now),
    ]);
    if (made!.meta.changes === 0) {
      const still = await c.var.db.query.invites.findFirst({ where: eq(invites.id, invite.id) });
      throw still && isLive(still, nowIso()) ? taken() : gone();
    }
    const user = (await c.var.db.query.users.findFirst({ where: eq(users.id, userId) }))!;
    return answerSignIn(c, await issueTokenPair(c.env, c.var.db, user), body.refresh_cookie, 201);
  },
);

inviteRoutes.delete(
  "/:id",
  documented({
    id: "deleteInvite",
    tag: "Users",
    summary: "Withdraw an invite (admins)",
    description: "Its link answers 410 `INVITE_GONE` from then on. 404 for an invite already accepted (or unknown).",
    caller: "person",
    responses: { 200: z.object({ deleted: z.literal(true), id }) },
  }),
  person("admin"),
  async (c) => {
    const [withdrawn] = await c.var.db
      .delete(invites)
      .where(and(eq(invites.id, c.req.param("id")), isNull(invites.acceptedAt)))
      .returning({ id: invites.id });
    if (!withdrawn) throw notFound("Invite");
    return c.json({ deleted: true, id: withdrawn.id });
  },
);
