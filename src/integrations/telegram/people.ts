/** Telegram's own part of linking: forgetting a chat's link and what it was still owed. */
import type { WorkerEnv } from "../../runtime/worker-env";

/** Statements that remove chat links (matched by `where` on telegram_links) and what they were still owed. */
export function forgetLinks(env: WorkerEnv, where: string, ...params: string[]): D1PreparedStatement[] {
  return [
    env.DB.prepare(
      `DELETE FROM outbox WHERE target_kind = 'telegram' AND status = 'pending' AND target_id IN (SELECT id FROM telegram_links WHERE ${where})`,
    ).bind(...params),
    env.DB.prepare(`DELETE FROM telegram_links WHERE ${where}`).bind(...params),
  ];
}
