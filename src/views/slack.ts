/** Slack's installations and a project's channels, as admins and members see them (API.md "Slack"): never a token. */
import { z } from "zod";
import type { slackChannels, slackInstallations } from "../db/schema";
import { CHAT_EVENTS, type ChatEvent } from "../domain/chat-events";
import { id, timestamp } from "./fields";

export const slackInstallationSchema = z
  .object({
    team_id: z.string().meta({ description: "The workspace's id (`T…`)" }),
    team_name: z.string().nullable(),
    bot_user_id: z.string().nullable().meta({ description: "The app's bot user in that workspace" }),
    source: z.enum(["oauth", "token"]).meta({ description: "`oauth`: installed through Slack's install flow; `token`: an admin pasted the bot token" }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "SlackInstallation" });

export const slackInstallationView = (row: typeof slackInstallations.$inferSelect): z.infer<typeof slackInstallationSchema> => ({
  team_id: row.teamId,
  team_name: row.teamName,
  bot_user_id: row.botUserId,
  source: row.source,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

export const slackChannelSchema = z
  .object({
    id,
    project_id: id,
    team_id: z.string(),
    channel_id: z.string().meta({ description: "Slack's id of the channel (`C…`, or `G…` for an older private one)" }),
    events: z
      .array(z.enum(CHAT_EVENTS as [ChatEvent, ...ChatEvent[]]))
      .nullable()
      .meta({ description: "The event types posted there; null for every kind" }),
    muted: z.boolean().meta({ description: "Nothing is posted while muted (`/orc mute` in the channel, or here)" }),
    created_at: timestamp,
  })
  .meta({ id: "SlackChannel" });

export const slackChannelView = (row: typeof slackChannels.$inferSelect): z.infer<typeof slackChannelSchema> => ({
  id: row.id,
  project_id: row.projectId,
  team_id: row.teamId,
  channel_id: row.channelId,
  // Written only through the routes' schema, which admits chat events alone.
  events: (row.events as ChatEvent[] | null) ?? null,
  muted: row.muted,
  created_at: row.createdAt,
});
