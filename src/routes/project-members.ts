/**
 * A project's members, each with a role there (member or viewer) that lowers, never raises, their own: a member of
 * the hub who is a viewer of a project only reads it. Admins add, change and remove members.
 */
import { and, asc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { PROJECT_ROLES, roleInProject } from "../auth/roles";
import type { UserRow } from "../db/client";
import { nowIso } from "../db/client";
import { projectMembers, ROLES, users } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { uuid } from "../http/fields";
import { conflict, notFound } from "../http/problem";
import { person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { disconnectUser } from "../room/client";
import { id, timestamp } from "../views/fields";
import { userSchema, userView } from "../views/people";

export const projectMemberRoutes = new Hono<HubEnv>();

type Membership = typeof projectMembers.$inferSelect;

const projectRole = z.enum(PROJECT_ROLES).meta({ description: "member: reads and writes the project; viewer: only reads it" });

const memberSchema = userSchema
  .extend({
    member_since: timestamp,
    project_role: projectRole,
    effective_role: z.enum(ROLES).meta({ description: "What the person may do in this project: the lower of `role` and `project_role` (admins stay admins)" }),
  })
  .meta({ id: "ProjectMember" });

const memberView = (user: UserRow, m: Membership): z.infer<typeof memberSchema> => ({
  ...userView(user),
  member_since: m.createdAt,
  project_role: m.role,
  effective_role: roleInProject(user.role, m.role),
});

const addedSchema = z.object({ project_id: id, user: userSchema, member: memberSchema });

const newMember = z.object({ user_id: uuid, role: projectRole.optional().meta({ description: "Left out: member" }) });
const roleChange = z.object({ role: projectRole });

/** The person's membership of the project, with the person; 404 `Member` when they are not one. */
async function membershipIn(c: HubContext, projectId: string, userId: string) {
  const [row] = await c.var.db
    .select({ user: users, membership: projectMembers })
    .from(projectMembers)
    .innerJoin(users, eq(users.id, projectMembers.userId))
    .where(and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, userId)));
  if (!row) throw notFound("Member");
  return row;
}

projectMemberRoutes.get(
  "/:id/members",
  documented({
    id: "listProjectMembers",
    tag: "Projects",
    summary: "List members",
    description: "The project's members, oldest first, each with their role in the project and what it makes of their own.",
    caller: "person",
    responses: { 200: z.object({ members: z.array(memberSchema) }) },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"));
    const rows = await c.var.db
      .select({ user: users, membership: projectMembers })
      .from(projectMembers)
      .innerJoin(users, eq(users.id, projectMembers.userId))
      .where(eq(projectMembers.projectId, project.id))
      .orderBy(asc(projectMembers.createdAt));
    return c.json({ members: rows.map((r) => memberView(r.user, r.membership)) });
  },
);

projectMemberRoutes.post(
  "/:id/members",
  documented({
    id: "addProjectMember",
    tag: "Projects",
    summary: "Add a member",
    description:
      "Admins only. `role` (member or viewer, member when left out) can lower the person's own role in this project, never raise it: a viewer " +
      "of the hub stays a viewer, an admin stays an admin. Adding a member again with the same role (or none) changes nothing; with another role it " +
      "is 409 `CONFLICT` (change a member's role with `PATCH .../members/{user_id}`).",
    caller: "person",
    body: newMember,
    responses: { 201: addedSchema },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const body = await readJson(c, newMember);
    const user = await c.var.db.query.users.findFirst({ where: eq(users.id, body.user_id) });
    if (!user) throw notFound("User");
    await c.var.db
      .insert(projectMembers)
      .values({ projectId: project.id, userId: user.id, role: body.role ?? "member", createdAt: nowIso() })
      .onConflictDoNothing();
    const { membership } = await membershipIn(c, project.id, user.id);
    if (body.role && membership.role !== body.role) {
      throw conflict(`This person is already a ${membership.role} of the project: change their role with PATCH .../members/${user.id}`);
    }
    return c.json({ project_id: project.id, user: userView(user), member: memberView(user, membership) }, 201);
  },
);

projectMemberRoutes.patch(
  "/:id/members/:userId",
  documented({
    id: "changeProjectMemberRole",
    tag: "Projects",
    summary: "Change a member's role",
    description:
      "Admins only. The person's open live feeds, terminals and tunnels of the project close, so that they reconnect under the new role " +
      "(a viewer watches a terminal and never types). 404 when the person is not a member.",
    caller: "person",
    body: roleChange,
    responses: { 200: memberSchema },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const body = await readJson(c, roleChange);
    const { user, membership } = await membershipIn(c, project.id, c.req.param("userId"));
    if (membership.role === body.role) return c.json(memberView(user, membership));
    const [changed] = await c.var.db
      .update(projectMembers)
      .set({ role: body.role })
      .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userId, user.id)))
      .returning();
    if (!changed) throw notFound("Member");
    await disconnectUser(c.env, user.id, [project.id]);
    return c.json(memberView(user, changed));
  },
);

projectMemberRoutes.delete(
  "/:id/members/:userId",
  documented({
    id: "removeProjectMember",
    tag: "Projects",
    summary: "Remove a member",
    description: "Admins only. Their live sockets on the project close.",
    caller: "person",
    responses: { 200: z.object({ removed: z.literal(true), project_id: id, user_id: id }) },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const [gone] = await c.var.db
      .delete(projectMembers)
      .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userId, c.req.param("userId"))))
      .returning();
    if (!gone) throw notFound("Member");
    await disconnectUser(c.env, gone.userId, [project.id]);
    return c.json({ removed: true, project_id: project.id, user_id: gone.userId });
  },
);
