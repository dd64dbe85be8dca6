/**
 * The Slack app's manifest (https://api.slack.com/reference/manifests), with this hub's URLs: an admin pastes it at
 * api.slack.com/apps -> "Create New App" -> "From an app manifest", and the app is set up as the hub expects.
 */
import type { ManifestParams } from "slack-edge";

/**
 * The bot token's scopes, each for something the hub does:
 * - `commands`: the `/orc` slash command.
 * - `chat:write`: posting a project's notifications and updating them in place (chat.postMessage, chat.update).
 * - `channels:read`: checking a public channel when a project adds it (conversations.info).
 * - `groups:read`: the same for a private channel the app was invited to.
 * - `channels:join`: joining a public channel a project adds, so it can post there without an invitation.
 * Not asked: `chat:write.public` (the bot joins instead, so the channel shows who posts), `users:read` (people link
 * themselves with a code; the hub never looks Slack users up), `im:*` (private answers go through response URLs).
 */
export const SLACK_BOT_SCOPES = ["commands", "chat:write", "channels:read", "groups:read", "channels:join"] as const;

export const SLACK_COMMAND = "/orc";

export function slackManifest(hubUrl: string, name = "Orchestratia"): ManifestParams {
  return {
    _metadata: { major_version: 1, minor_version: 1 },
    display_information: {
      name,
      description: "Questions, approvals and plans from your agents' tasks, answered from Slack",
      background_color: "#1f2937",
    },
    features: {
      bot_user: { display_name: name, always_online: true },
      slash_commands: [
        {
          command: SLACK_COMMAND,
          url: `${hubUrl}/slack/commands`,
          description: "Tasks, approvals and runs of the hub",
          usage_hint: "tasks | task <id> | watch | mute | run <template> | link <code> | help",
          should_escape: false,
        },
      ],
    },
    oauth_config: { redirect_urls: [`${hubUrl}/slack/oauth/callback`], scopes: { bot: [...SLACK_BOT_SCOPES] } },
    settings: {
      event_subscriptions: { request_url: `${hubUrl}/slack/events`, bot_events: ["app_uninstalled", "tokens_revoked"] },
      interactivity: { is_enabled: true, request_url: `${hubUrl}/slack/interactions` },
      org_deploy_enabled: false,
      socket_mode_enabled: false,
      token_rotation_enabled: false,
    },
  };
}
