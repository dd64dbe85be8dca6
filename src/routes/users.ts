/** Accounts, managed by admins. */
import { asc, eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { currentUser, person } from "../middleware/guards";
import { hashPassword } from "../auth/password";
import { revokeAllRefreshTokens } from "../auth/token-pair";
import { nowIso } from "../db/client";
import { projectMembers, users } from "../db/schema";
import { endClientGrantsOf } from "../mcp/client-grants";
import { dropLibraryGrantsOf } from "../mcp/grant-revocation";
import { disconnectUser } from "../room/client";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { email, label, password, role } from "../http/fields";
import { conflict, notFound } from "../http/problem";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { userSchema, userView } from "../views/people";

export const userRoutes = new Hono<HubEnv>();

const newUser = z.object({ email, password, name: label().optional(), role });
const userChanges = z
  .object({
    name: label().nullable().optional(),
    role: role.optional(),
    password: password.optional(),
    active: z.boolean().optional().meta({ description: "false deactivates the account (its tokens and sockets stop at once); true reactivates it" }),
  })
  .refine((b) => Object.keys(b).length > 0, "give at least one of name, role, password, active");

userRoutes.post(
  "/",
  documented({
    id: "createUser",
    tag: "Users",
    summary: "Create an account (admins)",
    description: "The email is kept in lower case; 409 `EMAIL_TAKEN` when an account has it already.",
    caller: "person",
    body: newUser,
    responses: { 201: userSchema },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, newUser);
    const now = nowIso();
    const [user] = await c.var.db
      .insert(users)
      .values({
        id: crypto.randomUUID(),
        email: body.email,
        name: body.name ?? null,
        role: body.role,
        passwordHash: await hashPassword(body.password),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: users.email })
      .returning();
    if (!user) throw conflict(`A user with email ${body.email} already exists`, "EMAIL_TAKEN");
    return c.json(userView(user), 201);
  },
);

userRoutes.get(
  "/",
  documented({
    id: "listUsers",
    tag: "Users",
    summary: "Every account, oldest first (admins)",
    caller: "person",
    responses: { 200: z.object({ users: z.array(userSchema) }) },
  }),
  person("admin"),
  async (c) => {
    const rows = await c.var.db.select().from(users).orderBy(asc(users.createdAt));
    return c.json({ users: rows.map(userView) });
  },
);

/** The projects a person could see, to close their live feeds there when that changes. */
async function reachableProjects(c: HubContext, userId: string): Promise<string[] | null> {
  const user = await c.var.db.query.users.findFirst({ where: eq(users.id, userId) });
  if (!user) return [];
  if (user.role === "admin") return null;
  return (await c.var.db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, userId))).map((r) => r.id);
}

userRoutes.patch(
  "/:id",
  documented({
    id: "updateUser",
    tag: "Users",
    summary: "Update a user",
    description:
      "Rename an account, change its role, set its password, or deactivate or reactivate it (admins).\n\n" +
      "A new password revokes the account's refresh tokens and every MCP client it authorised (OAuth). A new role applies to the next request (it is read on each); " +
      "the person's open live feeds are closed so that they reconnect under the new rules.\n\n" +
      "`active: false` stops the account at once: its access tokens are refused (401 `ACCOUNT_DEACTIVATED`), as are sign-in and refresh; its refresh " +
      "tokens and MCP clients are revoked; its live feeds, terminals and tunnels close; its Telegram chat no longer acts or hears. `active: true` lets " +
      "the person sign in again (with the same password). 409 `CANNOT_DEACTIVATE_SELF` for the caller's own account.",
    caller: "person",
    body: userChanges,
    responses: { 200: userSchema },
  }),
  person("admin"),
  async (c) => {
    const body = await readJson(c, userChanges);
    const id = c.req.param("id");
    const deactivating = body.active === false;
    if (deactivating && id === currentUser(c).id) throw conflict("Admins cannot deactivate their own account", "CANNOT_DEACTIVATE_SELF");
    const before = body.role || deactivating ? await reachableProjects(c, id) : [];
    const now = nowIso();
    const [user] = await c.var.db
      .update(users)
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.role ? { role: body.role } : {}),
        ...(body.password ? { passwordHash: await hashPassword(body.password) } : {}),
        // Deactivating again keeps the first time; reactivating clears it.
        ...(body.active !== undefined ? { deactivatedAt: body.active ? null : sql`coalesce(${users.deactivatedAt}, ${now})` } : {}),
        updatedAt: now,
      })
      .where(eq(users.id, id))
      .returning();
    if (!user) throw notFound("User");
    if (body.password || deactivating) {
      await c.var.db.batch([revokeAllRefreshTokens(c.var.db, user.id), endClientGrantsOf(c.var.db, user.id)]);
      await dropLibraryGrantsOf(c, user.id);
    }
    // A new role may reach fewer projects, a deactivated person none: open feeds reconnect under the new rules (or not at all).
    if (body.role || deactivating) await disconnectUser(c.env, user.id, before);
    return c.json(userView(user));
  },
);

userRoutes.delete(
  "/:id",
  documented({
    id: "deleteUser",
    tag: "Users",
    summary: "Delete a user",
    description:
      "Delete an account (admins); its live feeds close and every MCP client it authorised (OAuth) is refused from then on.\n\n" +
      "409 `CANNOT_DELETE_SELF` for the caller's own account.",
    caller: "person",
    responses: { 200: z.object({ deleted: z.literal(true), id }) },
  }),
  person("admin"),
  async (c) => {
    const id = c.req.param("id");
    if (id === currentUser(c).id) throw conflict("Admins cannot delete their own account", "CANNOT_DELETE_SELF");
    const reachable = await reachableProjects(c, id);
    const [gone] = await c.var.db.delete(users).where(eq(users.id, id)).returning({ id: users.id });
    if (!gone) throw notFound("User");
    // Its grants' rows went with it (cascade), which already stops its clients; the library's records follow.
    await dropLibraryGrantsOf(c, id);
    await disconnectUser(c.env, id, reachable);
    return c.json({ deleted: true, id });
  },
);
