/**
 * Who acts when a Slack user types a command or clicks: the person their (workspace, user) is linked to, and linking
 * by a one-use code (`/orc link <code>`, from POST /api/v1/auth/me/slack-link).
 */
import { sha256Hex } from "../../auth/secrets";
import type { UserRow } from "../../db/client";
import type { WorkerEnv } from "../../runtime/worker-env";

/** The person a Slack user is linked to; none while the person's account is deactivated (nothing acts as them). */
export async function linkedPerson(env: WorkerEnv, teamId: string, slackUserId: string): Promise<UserRow | null> {
  const row = await env.DB.prepare(
    `SELECT u.id, u.email, u.name, u.role, u.deactivated_at, u.inbox_seen_at, u.created_at, u.updated_at
     FROM slack_links l JOIN users u ON u.id = l.user_id WHERE l.team_id = ?1 AND l.slack_user_id = ?2 AND u.deactivated_at IS NULL`,
  )
    .bind(teamId, slackUserId)
    .first<Record<string, string | null>>();
  if (!row) return null;
  return {
    id: row.id!,
    email: row.email!,
    name: row.name ?? null,
    role: row.role as UserRow["role"],
    passwordHash: null,
    deactivatedAt: row.deactivated_at ?? null,
    inboxSeenAt: row.inbox_seen_at ?? null,
    createdAt: row.created_at!,
    updatedAt: row.updated_at!,
  };
}

/**
 * Spends a link code and links the Slack user to its person: the email linked to, or null when the code is unknown,
 * used or expired. A person has one Slack user and a Slack user one person: linking again moves the link.
 */
export async function redeemLinkCode(env: WorkerEnv, code: string, teamId: string, slackUserId: string): Promise<string | null> {
  const found = await env.DB.prepare("DELETE FROM slack_link_codes WHERE code_hash = ?1 RETURNING user_id, expires_at")
    .bind(await sha256Hex(code))
    .first<{ user_id: string; expires_at: string }>();
  if (!found || Date.parse(found.expires_at) < Date.now()) return null;
  const person = await env.DB.prepare("SELECT email FROM users WHERE id = ?1 AND deactivated_at IS NULL").bind(found.user_id).first<{ email: string }>();
  if (!person) return null;
  await env.DB.batch([
    env.DB.prepare("DELETE FROM slack_links WHERE user_id = ?1 OR (team_id = ?2 AND slack_user_id = ?3)").bind(found.user_id, teamId, slackUserId),
    env.DB.prepare("INSERT INTO slack_links (id, user_id, team_id, slack_user_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)").bind(
      crypto.randomUUID(),
      found.user_id,
      teamId,
      slackUserId,
      new Date().toISOString(),
    ),
  ]);
  return person.email;
}
