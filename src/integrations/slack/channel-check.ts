/** Whether the app can post in a channel of a workspace: installed there, the channel seen and not archived, joined if public. */
import { SlackAPIError } from "slack-edge";
import type { Env } from "../../runtime/env";
import { slackClient } from "./api";
import { botTokenOf } from "./installations";

export interface ChannelRefusal {
  field: "team_id" | "channel_id";
  reason: string;
}

/** Slack's answers for a channel the bot cannot see: none of that id, or a private one it was not invited to. */
const CHANNEL_UNSEEN = new Set(["channel_not_found", "method_not_supported_for_channel_type", "not_in_channel"]);

/** Null when the app can post there; why not, when Slack says; any other failure of Slack's is thrown. */
export async function channelRefusal(env: Pick<Env, "DB" | "DATA_KEY" | "SLACK_API_ROOT">, teamId: string, channelId: string): Promise<ChannelRefusal | null> {
  const token = await botTokenOf(env, teamId);
  if (!token) return { field: "team_id", reason: "the Slack app is not installed in that workspace" };
  const slack = slackClient(env, token);
  try {
    const { channel } = await slack.conversations.info({ channel: channelId });
    if (channel?.is_archived) return { field: "channel_id", reason: "the channel is archived" };
    if (!channel?.is_member && !channel?.is_private) await slack.conversations.join({ channel: channelId });
    return null;
  } catch (e) {
    if (e instanceof SlackAPIError && CHANNEL_UNSEEN.has(e.error)) {
      return { field: "channel_id", reason: "the app sees no such channel in that workspace (invite it to a private channel first: /invite @app)" };
    }
    if (e instanceof SlackAPIError && e.error === "is_archived") return { field: "channel_id", reason: "the channel is archived" };
    throw e;
  }
}
