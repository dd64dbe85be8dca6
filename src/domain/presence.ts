/** A server is online while its last heartbeat is under 90 s old (the daemon beats every 30 s). */
export const ONLINE_WINDOW_MS = 90_000;

export function isOnline(lastHeartbeat: string | null, now = Date.now()): boolean {
  return lastHeartbeat !== null && now - Date.parse(lastHeartbeat) < ONLINE_WINDOW_MS;
}
