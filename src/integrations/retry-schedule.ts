/**
 * When a delivery is tried again (pure). The first try is at once; each
 * failure waits longer, about 28 hours in all, after which the delivery has
 * failed and its endpoint is disabled (a dead endpoint must not hold a
 * growing queue for ever).
 */
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait before each attempt: attempt 1 at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_DELAYS_MS = [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] as const;

/** Pending deliveries an endpoint may hold at most; past this it is disabled. */
export const MAX_PENDING_DELIVERIES = 10_000;

/** When to try again after `attempts` failed attempts; null when there are no more tries. */
export function nextAttemptAt(attempts: number, failedAt: number): number | null {
  const delay = RETRY_DELAYS_MS[attempts];
  return delay === undefined ? null : failedAt + delay;
}
