/** The workspaces the Slack app is installed in, and their bot tokens (kept sealed with DATA_KEY). */
import { unseal } from "../../auth/sealed";
import type { Env } from "../../runtime/env";

/** A workspace's sealed bot token and the hub's address its installer used (a row `bot_token_sealed, hub_url`, or none), to read in a batch with others. */
export const sealedTokenOf = (env: Pick<Env, "DB">, teamId: string) =>
  env.DB.prepare("SELECT bot_token_sealed, hub_url FROM slack_installations WHERE team_id = ?1").bind(teamId);

/** The bot token of a workspace the app is installed in; null if it is not (or no longer) installed. */
export async function botTokenOf(env: Pick<Env, "DB" | "DATA_KEY">, teamId: string): Promise<string | null> {
  const row = await sealedTokenOf(env, teamId).first<{ bot_token_sealed: string }>();
  return row ? unseal(env.DATA_KEY, row.bot_token_sealed) : null;
}

/** Forgets a workspace (uninstalled, or its token revoked): its channels' pending messages are given up, saying why. */
export async function forgetInstallation(env: Pick<Env, "DB">, teamId: string) {
  await env.DB.batch([
    env.DB.prepare(
      `UPDATE outbox SET status = 'failed', last_error = 'not sent: the workspace was uninstalled or its token revoked'
       WHERE target_kind = 'slack' AND status = 'pending' AND substr(target_id, 1, length(?1) + 1) = ?1 || ':'`,
    ).bind(teamId),
    env.DB.prepare("DELETE FROM slack_installations WHERE team_id = ?1").bind(teamId),
  ]);
}
