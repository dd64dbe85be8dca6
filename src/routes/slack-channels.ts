/**
 * A project's Slack channels (API.md "Slack"): where its notifications are posted, each with the event types it
 * wants. Members who may change the project (and admins) add and change them; viewers read them.
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDb, projectFor } from "../auth/access";
import { nowIso } from "../db/client";
import { outbox, slackChannels, slackInstallations } from "../db/schema";
import { CHAT_EVENTS, type ChatEvent } from "../domain/chat-events";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, fieldError, notFound } from "../http/problem";
import { channelRefusal } from "../integrations/slack/channel-check";
import { currentUser, person } from "../middleware/guards";
import { documented, type Operation } from "../openapi/operation";
import { slackChannelSchema, slackChannelView } from "../views/slack";
import { slackProblem } from "./slack";

export const slackChannelRoutes = new Hono<HubEnv>();

const chatEvents = z
  .array(z.enum(CHAT_EVENTS as [ChatEvent, ...ChatEvent[]], "must be an event type Slack speaks of"))
  .min(1, "must name at least one event type (leave it out for every kind)")
  .max(CHAT_EVENTS.length)
  .refine((types) => new Set(types).size === types.length, "must not repeat an event type");

const createBody = z.object({
  channel_id: z
    .string()
    .trim()
    .regex(/^[CG][A-Z0-9]{2,20}$/, "must be a Slack channel id (`C…`, from the channel's details)"),
  team_id: z.string().trim().max(40).nullish(),
  events: chatEvents.nullish(),
});

const updateBody = z.object({
  events: chatEvents.nullable().optional(),
  muted: z.boolean("must be a boolean").optional(),
});

const channelOperation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Slack", caller: "person" });

/** The workspace a channel is added in: the one named, or the only one the app is installed in. */
async function workspaceOf(c: HubContext, teamId: string | null | undefined): Promise<string> {
  const rows = await c.var.db.select({ teamId: slackInstallations.teamId }).from(slackInstallations);
  if (teamId) {
    if (!rows.some((r) => r.teamId === teamId)) throw fieldError("team_id", "the Slack app is not installed in that workspace");
    return teamId;
  }
  if (rows.length === 1) return rows[0]!.teamId;
  throw fieldError("team_id", rows.length ? "the app is installed in several workspaces: name one" : "the Slack app is not installed in any workspace yet");
}

/** Checks the bot can post in the channel, joining a public one it is not in yet. */
async function checkChannel(c: HubContext, teamId: string, channelId: string) {
  let refusal;
  try {
    refusal = await channelRefusal(c.env, teamId, channelId);
  } catch (e) {
    throw slackProblem(e, "team_id");
  }
  if (refusal) throw fieldError(refusal.field, refusal.reason);
}

async function channelIn(c: HubContext, projectId: string) {
  const row = await c.var.db.query.slackChannels.findFirst({ where: and(eq(slackChannels.id, c.req.param("cid")!), eq(slackChannels.projectId, projectId)) });
  if (!row) throw notFound("Slack channel");
  return row;
}

slackChannelRoutes.post(
  "/:id/slack-channels",
  channelOperation({
    id: "addSlackChannel",
    summary: "Post the project's notifications in a Slack channel",
    description:
      "`team_id` may be left out when the app is installed in one workspace (422 naming it otherwise). The hub asks Slack about the channel " +
      "and joins it if it is public (422 naming `channel_id` when the app cannot see it: invite the app to a private channel first). " +
      "`events` lists the event types posted (leave it out or null for every kind). 409 when the project already posts there.",
    body: createBody,
    responses: { 201: slackChannelSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id")!, "write");
    const body = await readJson(c, createBody);
    const teamId = await workspaceOf(c, body.team_id);
    const taken = await c.var.db.query.slackChannels.findFirst({
      where: and(eq(slackChannels.projectId, project.id), eq(slackChannels.teamId, teamId), eq(slackChannels.channelId, body.channel_id)),
    });
    if (taken) throw conflict("The project already posts in that channel");
    await checkChannel(c, teamId, body.channel_id);
    const [row] = await c.var.db
      .insert(slackChannels)
      .values({
        id: crypto.randomUUID(),
        projectId: project.id,
        teamId,
        channelId: body.channel_id,
        events: body.events ?? null,
        muted: false,
        createdBy: currentUser(c).id,
        createdAt: nowIso(),
      })
      .onConflictDoNothing()
      .returning();
    if (!row) throw conflict("The project already posts in that channel");
    return c.json(slackChannelView(row), 201);
  },
);

slackChannelRoutes.get(
  "/:id/slack-channels",
  channelOperation({
    id: "listSlackChannels",
    summary: "The project's Slack channels",
    description: "Oldest first, with the workspaces the app is installed in (to pick from when adding one). Everyone who sees the project reads them.",
    responses: {
      200: z.object({
        channels: z.array(slackChannelSchema),
        workspaces: z
          .array(z.object({ team_id: z.string(), team_name: z.string().nullable() }))
          .meta({ description: "Where the Slack app is installed, oldest first" }),
      }),
    },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id")!, "read");
    const [rows, workspaces] = await Promise.all([
      c.var.db.select().from(slackChannels).where(eq(slackChannels.projectId, project.id)).orderBy(slackChannels.createdAt),
      c.var.db
        .select({ team_id: slackInstallations.teamId, team_name: slackInstallations.teamName })
        .from(slackInstallations)
        .orderBy(slackInstallations.createdAt),
    ]);
    return c.json({ channels: rows.map(slackChannelView), workspaces });
  },
);

slackChannelRoutes.patch(
  "/:id/slack-channels/:cid",
  channelOperation({
    id: "updateSlackChannel",
    summary: "Change a Slack channel's events, or mute it",
    description: "Fields left out stay as they were; `events: null` posts every kind. While `muted`, nothing is posted there (as `/orc mute` in the channel).",
    body: updateBody,
    responses: { 200: slackChannelSchema },
  }),
  person("member"),
  async (c) => {
    const row = await channelIn(c, (await projectFor(c, c.req.param("id")!, "write")).id);
    const body = await readJson(c, updateBody);
    const [updated] = await c.var.db
      .update(slackChannels)
      .set({ ...(body.events !== undefined ? { events: body.events } : {}), ...(body.muted !== undefined ? { muted: body.muted } : {}) })
      .where(eq(slackChannels.id, row.id))
      .returning();
    return c.json(slackChannelView(updated!));
  },
);

slackChannelRoutes.delete(
  "/:id/slack-channels/:cid",
  channelOperation({
    id: "removeSlackChannel",
    summary: "Stop posting in a Slack channel",
    description: "The project's messages still waiting for that channel go with it; what was posted stays in Slack.",
    responses: { 204: { description: "Removed" } },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id")!, "write");
    const row = await channelIn(c, project.id);
    // The channel is the directory's; what was still to be posted there of this project is on the project's shard.
    await c.var.db.delete(slackChannels).where(eq(slackChannels.id, row.id));
    await projectDb(c, project)
      .delete(outbox)
      .where(
        and(
          eq(outbox.targetKind, "slack"),
          eq(outbox.targetId, `${row.teamId}:${row.channelId}`),
          eq(outbox.projectId, project.id),
          eq(outbox.status, "pending"),
        ),
      );
    return c.body(null, 204);
  },
);
