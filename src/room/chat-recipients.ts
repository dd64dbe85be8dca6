/**
 * Who hears of a project in chat: the Telegram chats of the people who can see it (linked, not muted, not deactivated,
 * a member or an admin, watching it) and the Slack channels it posts to (not muted). Both live in the directory. A room
 * on the directory joins them in its outbox statement; a room on another shard reads them from the directory just
 * before its batch, with these same queries, and binds them into its statement as JSON (src/room/outbox.ts).
 */
import { sql, type SQL } from "drizzle-orm";
import { statement } from "./statements";

/** The project's Telegram recipients: rows `id` (the link's, which names its lane) and `email` (finished tasks go to their creator only). */
export const telegramRecipients = (projectId: string): SQL =>
  sql`SELECT l.id AS id, u.email AS email FROM telegram_links l JOIN users u ON u.id = l.user_id
      WHERE l.muted = 0 AND u.deactivated_at IS NULL
        AND (u.role = 'admin' OR EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = ${projectId} AND m.user_id = u.id))
        AND NOT EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(l.unwatched) THEN l.unwatched ELSE '[]' END) w WHERE w.value = ${projectId})`;

/** The project's Slack channels: rows `team_id`, `channel_id` and `events` (the JSON list of the types it picked, or null). */
export const slackRecipients = (projectId: string): SQL =>
  sql`SELECT team_id, channel_id, events FROM slack_channels WHERE project_id = ${projectId} AND muted = 0`;

/** Both lists as JSON arrays of objects, as the outbox statement of a room on another shard binds them. */
export interface ChatRecipients {
  telegram: string;
  slack: string;
}

export const NOBODY: ChatRecipients = { telegram: "[]", slack: "[]" };

/** One round trip to the directory: the project's recipients now. */
export async function readChatRecipients(directory: D1Database, projectId: string): Promise<ChatRecipients> {
  const row = await statement(
    directory,
    sql`SELECT (SELECT json_group_array(json_object('id', id, 'email', email)) FROM (${telegramRecipients(projectId)})) AS telegram,
               (SELECT json_group_array(json_object('team_id', team_id, 'channel_id', channel_id, 'events', events)) FROM (${slackRecipients(projectId)})) AS slack`,
  ).first<ChatRecipients>();
  return row ?? NOBODY;
}

/** The bound lists as relations with the columns of the directory's queries above. */
export const boundTelegram = (json: string): SQL => sql`SELECT value ->> '$.id' AS id, value ->> '$.email' AS email FROM json_each(${json})`;
export const boundSlack = (json: string): SQL =>
  sql`SELECT value ->> '$.team_id' AS team_id, value ->> '$.channel_id' AS channel_id, value ->> '$.events' AS events FROM json_each(${json})`;
