/** When a credential's last use is worth writing down: a busy client costs one write a minute, not one per request. */

export const USE_RECORD_MS = 60_000;

/** Whether a use at `now` is news for a credential last marked used at `lastUsedAt`. */
export const useIsNews = (lastUsedAt: string | null, now: Date) => lastUsedAt === null || now.getTime() - Date.parse(lastUsedAt) >= USE_RECORD_MS;
