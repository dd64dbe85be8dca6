/** Slack: workspaces the app is installed in, people linked to their Slack user, projects' channels, and what was posted. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects, users } from "./people";

/** A workspace the hub's Slack app is installed in: its bot token, sealed with DATA_KEY (src/auth/sealed.ts). */
export const slackInstallations = sqliteTable("slack_installations", {
  teamId: text("team_id").primaryKey(),
  teamName: text("team_name"),
  botTokenSealed: text("bot_token_sealed").notNull(),
  botUserId: text("bot_user_id"),
  /** The hub's address as the installer reached it: messages link to tasks there when PUBLIC_URL is not set. */
  hubUrl: text("hub_url"),
  /** `oauth` (Slack's install flow) or `token` (an admin pasted the bot token). */
  source: text("source", { enum: ["oauth", "token"] }).notNull(),
  installedBy: text("installed_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** A Slack user linked to a person: what they do in Slack, they do as that person, with that person's role. */
export const slackLinks = sqliteTable(
  "slack_links",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .unique()
      .references(() => users.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    slackUserId: text("slack_user_id").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("slack_links_user").on(t.teamId, t.slackUserId)],
);

/** One-use codes that link a Slack user (`/orc link <code>`); stored hashed. */
export const slackLinkCodes = sqliteTable("slack_link_codes", {
  codeHash: text("code_hash").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  expiresAt: text("expires_at").notNull(),
});

/** One-use `state` values of the OAuth install flow, stored hashed, naming the admin who began it. */
export const slackOauthStates = sqliteTable("slack_oauth_states", {
  stateHash: text("state_hash").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  expiresAt: text("expires_at").notNull(),
});

/** A channel a project posts to, with the event types it wants (null: every kind Slack speaks of). */
export const slackChannels = sqliteTable(
  "slack_channels",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    channelId: text("channel_id").notNull(),
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    /** `/orc mute` in the channel: nothing is posted there until it is unmuted. */
    muted: integer("muted", { mode: "boolean" }).notNull().default(false),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("slack_channels_project").on(t.projectId, t.teamId, t.channelId), index("slack_channels_channel").on(t.teamId, t.channelId)],
);

/**
 * A message the hub posted in a channel, by what it is about (`subject`: a task's thread, a question, a plan…), so a
 * later event updates it in place or answers in its thread.
 */
export const slackPosts = sqliteTable(
  "slack_posts",
  {
    teamId: text("team_id").notNull(),
    channelId: text("channel_id").notNull(),
    subject: text("subject").notNull(),
    projectId: text("project_id").notNull(),
    ts: text("ts").notNull(),
    /** The thread it was posted in, if any. */
    threadTs: text("thread_ts"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [uniqueIndex("slack_posts_subject").on(t.teamId, t.channelId, t.subject)],
);
