/**
 * A person's inbox: what waits on people in the projects they see (questions, help requests and approvals agents
 * asked, plans to review, agents' tasks to approve), what of it is unread, and marking it seen. Unread is kept per
 * person on the hub (users.inbox_seen_at), so it is the same on every device.
 */
import { eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { accessOf, membershipOf, principalOf, visibleProjectIds } from "../auth/access";
import { nowIso } from "../db/client";
import { INBOX_LIMIT, inboxCount, openQuestions, tasksAwaitingPeople } from "../db/inbox";
import { DIRECTORY, onEachShard } from "../db/shards";
import type { Db } from "../db/client";
import { projects, users } from "../db/schema";
import { inJsonList } from "../db/sql";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { currentUser, person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { inboxCountSchema, inboxItems, inboxSchema, type InboxScope } from "../views/inbox";

export const inboxRoutes = new Hono<HubEnv>();

/** The inbox's scope, and the shard each of its projects lives on. */
type ShardedScope = InboxScope & { shards: Map<string, string> };

/** The projects the caller sees, named, with whether the caller may answer in each; and up to when the inbox was seen. */
async function scopeOf(c: HubContext, seenAt: string | null): Promise<ShardedScope> {
  const p = principalOf(c);
  const visible = await visibleProjectIds(c);
  if (visible?.length === 0) return { projects: new Map(), seenAt, shards: new Map() };
  const rows = await c.var.db
    .select({ id: projects.id, name: projects.name, shard: projects.shard, member: membershipOf(p, projects.id) })
    .from(projects)
    .where(visible ? inJsonList(projects.id, visible) : undefined);
  return {
    projects: new Map(rows.map((r) => [r.id, { name: r.name, canAnswer: accessOf(p, r.id, r.member) === "write" }])),
    seenAt,
    shards: new Map(rows.map((r) => [r.id, r.shard])),
  };
}

/**
 * `read` on each shard the projects live on, at once, with the projects there; the directory's shard in the request's
 * session (its bookmark), the others at their binding.
 */
function perShard<T>(c: HubContext, scope: ShardedScope, ids: string[], read: (db: Db, ids: string[]) => Promise<T>): Promise<T[]> {
  const byShard = new Map<string, string[]>();
  for (const id of ids) byShard.set(scope.shards.get(id)!, [...(byShard.get(scope.shards.get(id)!) ?? []), id]);
  return onEachShard(c.env, byShard, (db, shardIds, shard) => read(shard === DIRECTORY ? c.var.db : db, shardIds));
}

const answerable = (scope: InboxScope) => [...scope.projects].filter(([, project]) => project.canAnswer).map(([id]) => id);

async function countFor(c: HubContext, seenAt: string | null) {
  const scope = await scopeOf(c, seenAt);
  const counts = await perShard(c, scope, answerable(scope), (db, ids) => inboxCount(db, ids, seenAt));
  const newest = counts.reduce<string | null>((at, n) => (n.newest_at !== null && (at === null || n.newest_at > at) ? n.newest_at : at), null);
  return { unread: counts.reduce((sum, n) => sum + n.unread, 0), newest_at: newest, seen_at: seenAt };
}

inboxRoutes.get(
  "/",
  documented({
    id: "getInbox",
    tag: "Interventions",
    summary: "The caller's inbox",
    description:
      "What waits on people in every project the caller sees, newest first: questions, help requests and approvals agents asked of people " +
      "(not a question one agent asked another's session), plans to review, and tasks agents created that wait for approval. Each item names " +
      "its project, its task, the agent that asks (its server and session) and when it began to wait. Viewers see the items of their projects " +
      "with `can_answer` false. An item is `unread` when the caller can answer it and it arrived after the caller last marked the inbox seen " +
      "(POST /api/v1/inbox/seen). At most 200 of each kind (interventions; tasks).",
    caller: "person",
    responses: { 200: inboxSchema },
  }),
  person(),
  async (c) => {
    const seenAt = currentUser(c).inboxSeenAt;
    const scope = await scopeOf(c, seenAt);
    const ids = [...scope.projects.keys()];
    const pages = await perShard(c, scope, ids, (db, shardIds) => Promise.all([openQuestions(db, shardIds), tasksAwaitingPeople(db, shardIds)]));
    // Each shard answered its newest of each kind; together, the newest of each kind over all of them.
    const newest = <T extends { created_at?: string; asked_at?: string }>(rows: T[]) =>
      rows.sort((a, b) => ((b.created_at ?? b.asked_at)! > (a.created_at ?? a.asked_at)! ? 1 : -1)).slice(0, INBOX_LIMIT);
    const items = inboxItems(newest(pages.flatMap(([q]) => q)), newest(pages.flatMap(([, t]) => t)), scope);
    return c.json({ items, unread: items.filter((i) => i.unread).length, seen_at: seenAt });
  },
);

inboxRoutes.get(
  "/count",
  documented({
    id: "countInbox",
    tag: "Interventions",
    summary: "How many inbox items are unread",
    description:
      "The number the dashboard shows beside Inbox and in its tab's title: items the caller can answer that arrived after `seen_at`, and " +
      "when the newest of them arrived (a change of `newest_at` says something new came, even when the count stays).",
    caller: "person",
    responses: { 200: inboxCountSchema },
  }),
  person(),
  async (c) => c.json(await countFor(c, currentUser(c).inboxSeenAt)),
);

const seenBody = z.object({
  until: z.iso
    .datetime({ error: "must be an ISO 8601 time in UTC, such as 2026-01-02T03:04:05.000Z" })
    .optional()
    .meta({ description: "Seen up to this time (the newest `asked_at` the caller was shown); now when left out. Never later than now." }),
});

inboxRoutes.post(
  "/seen",
  documented({
    id: "markInboxSeen",
    tag: "Interventions",
    summary: "Mark the inbox seen",
    description:
      "The caller has seen the inbox up to `until` (or now): what arrived until then is no longer unread, on any device. A time earlier than " +
      "the one already recorded changes nothing. Answers the count as GET /api/v1/inbox/count does.",
    caller: "person",
    body: seenBody,
    responses: { 200: inboxCountSchema },
  }),
  person(),
  async (c) => {
    const { until } = await readJson(c, seenBody);
    const now = nowIso();
    const at = until && new Date(until).toISOString() < now ? new Date(until).toISOString() : now;
    const user = currentUser(c);
    const [row] = await c.var.db
      .update(users)
      .set({ inboxSeenAt: sql`MAX(COALESCE(${users.inboxSeenAt}, ''), ${at})` })
      .where(eq(users.id, user.id))
      .returning({ seenAt: users.inboxSeenAt });
    return c.json(await countFor(c, row?.seenAt ?? at));
  },
);
