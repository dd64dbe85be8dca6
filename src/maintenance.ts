/** Hourly housekeeping (cron trigger): forgets what has expired. */
import type { Env } from "./env";
import { IDEMPOTENCY_TTL_MS } from "./http/idempotency";

const KEEP_EXPIRED_MS = 7 * 24 * 60 * 60 * 1000;

export async function sweepExpired(env: Env, now = Date.now()) {
  const idempotencyCutoff = new Date(now - IDEMPOTENCY_TTL_MS).toISOString();
  const expiredCutoff = new Date(now - KEEP_EXPIRED_MS).toISOString();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM idempotency_keys WHERE created_at < ?1").bind(idempotencyCutoff),
    env.DB.prepare("DELETE FROM refresh_tokens WHERE expires_at < ?1").bind(expiredCutoff),
    env.DB.prepare("DELETE FROM registration_tokens WHERE expires_at < ?1").bind(expiredCutoff),
    env.DB.prepare("DELETE FROM telegram_link_codes WHERE expires_at < ?1").bind(new Date(now).toISOString()),
    // Deliveries that are over (delivered or given up) are kept a week for their log; their attempts go with them.
    env.DB.prepare("DELETE FROM outbox WHERE status != 'pending' AND created_at < ?1").bind(expiredCutoff),
  ]);
}
