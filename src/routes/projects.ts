/** Projects and their members. */
import { desc, eq, max } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor, projectWithRoleFor, visibleProjectIds } from "../auth/access";
import { currentUser, person } from "../middleware/guards";
import type { ProjectRow } from "../db/client";
import { nowIso } from "../db/client";
import { events, projects, ROLES } from "../db/schema";
import { slugify } from "../domain/slug";
import { readJson, readQuery } from "../http/body";
import { eventSchema } from "../views/events";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { roomStub, runInRoom, serversWithSessionsIn } from "../room/client";
import { linkStub } from "../server-link/client";
import { deleteProjectBlobs } from "../datarefs/blobs";
import type { HubEnv } from "../http/context";
import { label, seqQuery, text } from "../http/fields";
import { inJsonList } from "../db/sql";
import { projectSchema, projectSettingsSchema, projectView } from "../views/people";
import { isHubAdmin } from "../auth/token-limits";
import { Problem } from "../http/problem";
import { chooseShard, isShard, shardNames } from "../db/shards";
import { projectDb } from "../auth/access";
import { dropProjectCopy, mirrorProject, settingsToDirectory } from "../db/shard-mirrors";
import { projectMemberRoutes } from "./project-members";
import { projectMoveRoutes } from "./project-moves";
import { overviewRoutes } from "./overview";
import { archiveDb } from "./archived-tasks";
import { eventsSince } from "../archive/reads";

export const projectRoutes = new Hono<HubEnv>();
projectRoutes.route("/", projectMemberRoutes);
projectRoutes.route("/", projectMoveRoutes);
// Before "/:id": "/overview" is the overviews' address, not a project's.
projectRoutes.route("/", overviewRoutes);

/** Numbers a slug's suffix is read as at most this many digits: a longer run is a name's own, never a count to go on from. */
const MAX_SLUG_NUMBER_DIGITS = 9;

/**
 * Inserts a project under the name's slug or, while that is taken, under the
 * slug with the smallest free number appended (-2, -3, ...): 2, or one past a
 * number already taken. One statement finds the slug and takes it, so
 * concurrent creates of one name each get their own without retrying. Slugs
 * under the name's are found by a range on the unique index, not LIKE: D1
 * refuses LIKE patterns over 50 bytes, and a slug has up to 60 characters.
 */
const insertProject = (d1: D1Database, project: ProjectRow, base: string) =>
  d1
    .prepare(
      `INSERT INTO projects (id, name, slug, description, created_by, created_at, updated_at, shard)
       SELECT ?1, ?2, CASE WHEN NOT EXISTS (SELECT 1 FROM projects WHERE slug = ?3) THEN ?3 ELSE ?3 || '-' || (
         SELECT MIN(c) FROM (
           SELECT 2 AS c UNION ALL
           SELECT CAST(n AS INTEGER) + 1 FROM (SELECT substr(slug, length(?3) + 2) AS n FROM projects WHERE slug > ?3 || '-' AND slug < ?3 || '.')
           WHERE n != '' AND length(n) <= ${MAX_SLUG_NUMBER_DIGITS} AND n NOT GLOB '*[^0-9]*'
         ) WHERE NOT EXISTS (SELECT 1 FROM projects WHERE slug = ?3 || '-' || c)) END, ?4, ?5, ?6, ?6, ?7
       RETURNING slug`,
    )
    .bind(project.id, project.name, base, project.description, project.createdBy, project.createdAt, project.shard);

const newProject = z.object({
  name: label(),
  description: text().nullable().optional(),
  shard: z
    .string()
    .optional()
    .meta({ description: "Admins only: the shard (a D1 binding, `DB`, `DB_1`…) its tasks live on; by default the open shard with the fewest projects" }),
});
const projectChanges = z.object({ name: label().optional(), description: text().nullable().optional() });
const settingsChange = z.object({
  settings: z
    .strictObject({
      approve_agent_tasks: projectSettingsSchema.shape.approve_agent_tasks.optional(),
      remote_exec: projectSettingsSchema.shape.remote_exec.optional(),
      require_result: projectSettingsSchema.shape.require_result.optional(),
      stall_minutes: projectSettingsSchema.shape.stall_minutes.optional(),
      stall_action: projectSettingsSchema.shape.stall_action.optional(),
      unassignable_minutes: projectSettingsSchema.shape.unassignable_minutes.optional(),
      archive_after_days: projectSettingsSchema.shape.archive_after_days.optional(),
    })
    // Only once the names are known: an unknown one is its own error.
    .refine((s) => Object.keys(s).length > 0, { message: "name at least one setting to change", when: (p) => p.issues.length === 0 }),
});
const projectWithHead = projectSchema
  .extend({
    last_seq: z.int().meta({ description: "The seq of the project's last event (0 for none)" }),
    shard: z.string().optional().meta({ description: "Admins only: the shard (D1 binding) its tasks live on" }),
    moving_to: z.string().nullable().optional().meta({ description: "Admins only: while it moves, the shard it goes to (writes answer 503 meanwhile)" }),
    my_role: z
      .enum(ROLES)
      .nullable()
      .meta({ description: "What the caller may do here: their role, lowered by their membership's (a viewer only reads); null for a server" }),
  })
  .meta({ id: "ProjectWithHead", description: "A project, with where its event log stands" });

projectRoutes.post(
  "/",
  documented({
    id: "createProject",
    tag: "Projects",
    summary: "Create a project",
    description:
      "The slug is made from the name (`-2`, `-3`… while taken). The creator becomes a member.\n\n" +
      "Its tasks live on one shard, chosen now and never changed but by a move: an admin may name it (`shard`), else the open shard " +
      "(`OPEN_SHARDS`) with the fewest projects.",
    caller: "person",
    body: newProject,
    responses: { 201: projectSchema },
  }),
  person("member"),
  async (c) => {
    const body = await readJson(c, newProject);
    const user = currentUser(c);
    if (body.shard !== undefined && !isHubAdmin(c.var.principal))
      throw new Problem(403, "FORBIDDEN", "Only an admin chooses a project's shard", [{ path: "shard", message: "admins only" }]);
    if (body.shard !== undefined && !isShard(c.env, body.shard))
      throw new Problem(422, "VALIDATION_FAILED", "No such shard", [{ path: "shard", message: `must be one of ${shardNames(c.env).join(", ")}` }]);
    const shard = body.shard ?? (await chooseShard(c.env, c.var.db));
    const now = nowIso();
    const project: ProjectRow = {
      id: crypto.randomUUID(),
      name: body.name,
      slug: "",
      description: body.description ?? null,
      settings: {},
      createdBy: user.id,
      createdAt: now,
      updatedAt: now,
      shard,
      movingTo: null,
    };
    // The creator becomes a member, so a member who creates a project can see it.
    const [inserted] = await c.env.DB.batch([
      insertProject(c.env.DB, project, slugify(body.name)),
      c.env.DB.prepare("INSERT INTO project_members (project_id, user_id, created_at) VALUES (?1, ?2, ?3)").bind(project.id, user.id, now),
    ]);
    const created = { ...project, slug: (inserted!.results[0] as { slug: string }).slug };
    // Its shard keeps a copy of its row, which the shard's own rows of it hang from.
    await mirrorProject(c.env, created);
    return c.json(projectView(created), 201);
  },
);

projectRoutes.get(
  "/",
  documented({
    id: "listProjects",
    tag: "Projects",
    summary: "List projects",
    description: "The projects the caller can see, newest first.",
    caller: "person",
    responses: { 200: z.object({ projects: z.array(projectSchema) }) },
  }),
  person(),
  async (c) => {
    const visible = await visibleProjectIds(c);
    const rows =
      visible === null
        ? await c.var.db.select().from(projects).orderBy(desc(projects.createdAt))
        : visible.length === 0
          ? []
          : await c.var.db.select().from(projects).where(inJsonList(projects.id, visible)).orderBy(desc(projects.createdAt));
    return c.json({ projects: rows.map(projectView) });
  },
);

/** A project, with the seq of its last event: a live view reads what it shows, then follows the socket from there. */
projectRoutes.get(
  "/:id",
  documented({
    id: "getProject",
    tag: "Projects",
    summary: "Get a project",
    description: "With the seq of its last event: a live view reads what it shows, then follows the socket from there.",
    caller: "person",
    responses: { 200: projectWithHead },
  }),
  person(),
  async (c) => {
    const { project, role } = await projectWithRoleFor(c, c.req.param("id"));
    const [head] = await projectDb(c, project)
      .select({ seq: max(events.seq) })
      .from(events)
      .where(eq(events.projectId, project.id));
    const placement = isHubAdmin(c.var.principal) ? { shard: project.shard, moving_to: project.movingTo } : {};
    return c.json({ ...projectView(project), last_seq: head?.seq ?? 0, my_role: role, ...placement });
  },
);

projectRoutes.put(
  "/:id",
  documented({
    id: "updateProject",
    tag: "Projects",
    summary: "Update a project",
    description: "Rename it or change its description. The slug stays as it was, so links keep working.",
    caller: "person",
    body: projectChanges,
    responses: { 200: projectSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const body = await readJson(c, projectChanges);
    const [updated] = await c.var.db
      .update(projects)
      .set({
        // The slug stays as it was: links and scripts keep working after a rename.
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        updatedAt: nowIso(),
      })
      .where(eq(projects.id, project.id))
      .returning();
    await mirrorProject(c.env, updated!);
    return c.json(projectView(updated!));
  },
);

projectRoutes.patch(
  "/:id",
  documented({
    id: "changeProjectSettings",
    tag: "Projects",
    summary: "Change a project's settings",
    description:
      "Admins only. The settings named change; the others stay as they are (a setting the hub does not have is 422).\n\n" +
      "`approve_agent_tasks` (off by default): tasks that agents create from then on wait for a person. Such a task is marked " +
      "`awaiting_approval`: it keeps its status, is never auto-assigned, and starting or planning it is 409 `TASK_AWAITING_APPROVAL` until a " +
      "member or admin approves it (`POST /api/v1/tasks/{id}/approve`); it may be assigned by hand meanwhile, and the session's daemon " +
      "hears of it only once it is approved (a plain `task_assigned`). Tasks already created are not affected.\n\n" +
      "`remote_exec` (off by default): any agent in the project may run shell commands in another open session of the project " +
      "(`POST /api/v1/server/remote/exec`) and send it files (`POST /api/v1/server/remote/file-transfer`); each use is an event.\n\n" +
      "Liveness rules (all off by default): `require_result` (false): a completion whose result carries no summary (a non-blank " +
      "`summary`) and no contract (a non-empty `contracts`) goes to `needs_human` instead of `done`, its result kept on the task, with " +
      "the event `completion_without_result` and an open question saying why; dependents stay blocked. Answering the question sends the " +
      "task back to its agent (`running`) to complete it again with a result; or cancel it. `stall_minutes` (null, or 1–1440): a " +
      "`running` task with no heartbeat from its server, no note and no progress for that long raises `task_stalled` once (again only " +
      "after a new sign of life); with `stall_action` `needs_human` (default `alert`) the task also moves to `needs_human` with the reason " +
      "as its question. `unassignable_minutes` (null, or 1–1440): a `pending`, unblocked task not awaiting approval, with requirements " +
      "that no server serving the project can take for that long, raises `task_unassignable` once per wait, with each server's reason. " +
      "These events reach webhooks and Telegram like the others.\n\n" +
      "`archive_after_days` (30 by default, null for never, or 1–3650): finished tasks (done, failed, cancelled) finished longer ago than " +
      "that, with their events, dependencies, notes, questions and usage, move from the database to compressed archives, as do the " +
      "permission log and finished webhook deliveries; archived tasks stay readable by id (`archived: true`) and their events by `since`.\n\n" +
      "A change is the event `project_settings_changed`.",
    caller: "person",
    body: settingsChange,
    responses: { 200: projectSchema },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const body = await readJson(c, settingsChange);
    await runInRoom(c, project.id, { op: "change_settings", settings: body.settings });
    // The room changed its shard's copy (the settings it reads); the directory's row follows.
    await settingsToDirectory(c.env, project);
    const updated = await c.var.db.query.projects.findFirst({ where: eq(projects.id, project.id) });
    return c.json(projectView(updated!));
  },
);

projectRoutes.delete(
  "/:id",
  documented({
    id: "deleteProject",
    tag: "Projects",
    summary: "Delete a project",
    description: "Admins only. Its tasks, sessions, events and DataRefs go with it; its live sockets close.",
    caller: "person",
    responses: { 200: z.object({ deleted: z.literal(true), id }) },
  }),
  person("admin"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    // Read before the sessions go with the project: their servers' links hold its terminals.
    const links = await serversWithSessionsIn(c.env, [project.id]);
    await c.var.db.delete(projects).where(eq(projects.id, project.id));
    // Its rows on its shard hang from the shard's copy of it: they go with it.
    await dropProjectCopy(c.env, project.shard, project.id);
    if (project.movingTo) await dropProjectCopy(c.env, project.movingTo, project.id);
    c.executionCtx.waitUntil(roomStub(c.env, project.id).closeAll("the project was deleted"));
    for (const serverId of links) c.executionCtx.waitUntil(linkStub(c.env, serverId).closeProject(project.id));
    c.executionCtx.waitUntil(deleteProjectBlobs(c.env.BLOBS, project.id));
    return c.json({ deleted: true, id: project.id });
  },
);

const eventsQuery = z.object({
  since: seqQuery.default(0),
  limit: z.coerce.number().int().min(1, "must be at least 1").max(1000, "must be at most 1000").default(100),
});

/** The project's event log after `since`, in seq order. */
projectRoutes.get(
  "/:id/events",
  documented({
    id: "listProjectEvents",
    tag: "Projects",
    summary: "List events",
    description:
      "The project's event log after `since`, in seq order, at most `limit` at a time. Archived tasks' events (`archive_after_days`) are read from the archive, in the same order. " +
      "A page reading the archive may hold fewer than `limit` while more follow (it bounds the archived objects it opens): page on with `next_since` until a page is empty. " +
      "503 `ARCHIVE_UNAVAILABLE` when an archived object it needs is missing.",
    caller: "person",
    query: eventsQuery,
    responses: {
      200: z.object({ events: z.array(eventSchema), next_since: z.int().meta({ description: "Send as `since` for the next page" }) }),
    },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"));
    const q = readQuery(c, eventsQuery);
    // Archived tasks' events come from the archive, merged in seq order with those still in D1.
    const rows = await eventsSince(await archiveDb(c, project.id), c.env.BLOBS, project.id, q.since, q.limit);
    return c.json({ events: rows, next_since: rows.at(-1)?.seq ?? q.since });
  },
);
