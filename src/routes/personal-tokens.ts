/** A person's own personal access tokens: made (shown once), listed with their last use, revoked. */
import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { visibleProjectIds } from "../auth/access";
import { newPersonalToken } from "../auth/personal-tokens";
import { currentUser, signedInPerson } from "../middleware/guards";
import { personalAccessTokens, projects, TOKEN_SCOPES } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { label, uuid } from "../http/fields";
import { fieldError, notFound } from "../http/problem";
import { documented } from "../openapi/operation";
import { issuedPersonalTokenSchema, personalTokenSchema, personalTokenView } from "../views/personal-tokens";

export const personalTokenRoutes = new Hono<HubEnv>();

const DAY = 86_400;

const newToken = z.object({
  name: label(100),
  scope: z.enum(TOKEN_SCOPES).meta({ description: "`read`: it may only read (as a viewer); `write`: it may do what its person may" }),
  project_ids: z
    .array(uuid)
    .min(1, "give at least one project, or leave it out for all")
    .max(100, "must be at most 100 projects")
    .optional()
    .meta({ description: "Projects the caller can see; left out: every project its person can see at each use" }),
  expires_in_seconds: z
    .int("must be an integer")
    .min(60, "must be at least 60")
    .max(365 * DAY, "must be at most a year")
    .default(90 * DAY)
    .meta({ description: "Left out: 90 days" }),
});

/** The projects asked for, each one the caller can see (422 otherwise, alike for one that does not exist). */
async function projectsSeen(c: HubContext, asked: string[]): Promise<string[]> {
  const wanted = [...new Set(asked)];
  const visible = await visibleProjectIds(c);
  const found = await c.var.db.select({ id: projects.id }).from(projects).where(inArray(projects.id, wanted));
  const unseen = wanted.filter((id) => !found.some((p) => p.id === id) || (visible !== null && !visible.includes(id)));
  if (unseen.length) throw fieldError("project_ids", `not a project you can see: ${unseen.join(", ")}`);
  return wanted;
}

personalTokenRoutes.post(
  "/me/tokens",
  documented({
    id: "createPersonalToken",
    tag: "Auth",
    summary: "Make a personal access token",
    description:
      "A bearer token for a client that cannot sign in (an MCP or A2A client, a script): `Authorization: Bearer orcpat_...` on the REST API, `/mcp` and " +
      "`/a2a/...`. It never does more than its person may do at the time of each use (their role and memberships now), nor more than it allows: " +
      "a `read` token changes nothing (403 `TOKEN_SCOPE`); one limited to `project_ids` sees no other project (404, as if missing) and cannot use routes " +
      "that span the hub. Expired: 401 `PERSONAL_TOKEN_EXPIRED`; revoked: 401 `PERSONAL_TOKEN_REVOKED`; the person deactivated or deleted: 401.\n\n" +
      "The token is in this answer only, and needs a person signed in (a personal token cannot make another: 403 `PERSONAL_TOKEN_NOT_ACCEPTED`). " +
      "422 names `project_ids` when one is not a project the caller can see.",
    caller: "person",
    body: newToken,
    responses: { 201: issuedPersonalTokenSchema },
  }),
  signedInPerson(),
  async (c) => {
    const user = currentUser(c);
    const body = await readJson(c, newToken);
    const projectIds = body.project_ids ? await projectsSeen(c, body.project_ids) : null;
    const { token, hash } = await newPersonalToken();
    const now = Date.now();
    const [row] = await c.var.db
      .insert(personalAccessTokens)
      .values({
        id: crypto.randomUUID(),
        userId: user.id,
        name: body.name,
        tokenHash: hash,
        scope: body.scope,
        projectIds,
        expiresAt: new Date(now + body.expires_in_seconds * 1000).toISOString(),
        createdAt: new Date(now).toISOString(),
      })
      .returning();
    // Shown once: a replay under the same Idempotency-Key must not hand it out again.
    c.set("secretResponse", "once");
    return c.json({ ...personalTokenView(row!), token } satisfies z.infer<typeof issuedPersonalTokenSchema>, 201);
  },
);

personalTokenRoutes.get(
  "/me/tokens",
  documented({
    id: "listPersonalTokens",
    tag: "Auth",
    summary: "List one's personal access tokens",
    description:
      "The caller's tokens not revoked, newest first, expired ones included (until revoked), each with its last use (recorded at most once a minute).",
    caller: "person",
    responses: { 200: z.object({ tokens: z.array(personalTokenSchema) }) },
  }),
  signedInPerson(),
  async (c) => {
    const rows = await c.var.db
      .select()
      .from(personalAccessTokens)
      .where(and(eq(personalAccessTokens.userId, currentUser(c).id), isNull(personalAccessTokens.revokedAt)))
      .orderBy(desc(personalAccessTokens.createdAt));
    return c.json({ tokens: rows.map(personalTokenView) });
  },
);

personalTokenRoutes.delete(
  "/me/tokens/:id",
  documented({
    id: "revokePersonalToken",
    tag: "Auth",
    summary: "Revoke a personal access token",
    description: "From the next request on, the token is refused (401 `PERSONAL_TOKEN_REVOKED`). 404 for an id that is not one of the caller's live tokens.",
    caller: "person",
    params: z.object({ id: z.string().max(128).meta({ description: "The token's `id`, as listed" }) }),
    responses: { 204: { description: "Revoked" } },
  }),
  signedInPerson(),
  async (c) => {
    const revoked = await c.var.db
      .update(personalAccessTokens)
      .set({ revokedAt: new Date().toISOString() })
      .where(and(eq(personalAccessTokens.id, c.req.param("id")), eq(personalAccessTokens.userId, currentUser(c).id), isNull(personalAccessTokens.revokedAt)))
      .returning({ id: personalAccessTokens.id });
    if (revoked.length === 0) throw notFound("Personal access token");
    return c.body(null, 204);
  },
);
