/**
 * The inbox's unread count for the whole dashboard (the navigation and the tab's title), and the notifications of
 * what newly waits on the person. Read when the dashboard opens, again whenever an open project's live feed carries
 * an event that changes what waits on people, when the tab comes back into view, and every 30 s (no feed covers
 * every project). The count itself is the hub's (per person, the same on every device).
 */
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../client";
import { hub, ok } from "./api";
import { onAnyFeedEvents } from "./live";
import { notifyOf } from "./notifications";

export type InboxCount = Schemas["InboxCount"];

const POLL_MS = 30_000;
/** Events of a feed close together make one read. */
const FEED_DELAY_MS = 250;
const WAITING_ON_PEOPLE = new Set([
  "intervention_requested",
  "intervention_responded",
  "intervention_timed_out",
  "plan_submitted",
  "plan_approved",
  "plan_revision_requested",
  "task_awaiting_approval",
  "task_approved",
  "task_cancelled",
]);
const BASE_TITLE = document.title;

let current: InboxCount | null = null;
/** The newest item notified of (or there when the dashboard opened): only what arrives after it is notified. */
let notifiedUpTo: string | null | undefined;
const listeners = new Set<(count: InboxCount) => void>();
let stopWatching: (() => void) | null = null;
let pending: ReturnType<typeof setTimeout> | undefined;

/** Takes a count the hub answered: shown everywhere, and what arrived since the last one notified. */
export function landInboxCount(count: InboxCount) {
  current = count;
  document.title = count.unread > 0 ? `(${count.unread}) ${BASE_TITLE}` : BASE_TITLE;
  listeners.forEach((l) => l(count));
  const since = notifiedUpTo;
  if (since === undefined || (count.newest_at !== null && (since === null || count.newest_at > since))) notifiedUpTo = count.newest_at;
  if (since === undefined || count.newest_at === null || (since !== null && count.newest_at <= since)) return;
  void ok(hub.GET("/api/v1/inbox")).then(
    (box) => notifyOf(box.items.filter((i) => i.can_answer && (since === null || i.asked_at > since))),
    () => undefined,
  );
}

/** Reads the count again after `delay` ms (reads asked for meanwhile make one). */
export function rereadInboxCount(delay = 0) {
  clearTimeout(pending);
  pending = setTimeout(() => void ok(hub.GET("/api/v1/inbox/count")).then(landInboxCount, () => undefined), delay);
}

function watch(): () => void {
  rereadInboxCount();
  const poll = setInterval(() => rereadInboxCount(), POLL_MS);
  const offFeeds = onAnyFeedEvents((events) => events.some((e) => WAITING_ON_PEOPLE.has(e.event_type)) && rereadInboxCount(FEED_DELAY_MS));
  const onVisible = () => document.visibilityState === "visible" && rereadInboxCount();
  document.addEventListener("visibilitychange", onVisible);
  return () => {
    clearInterval(poll);
    clearTimeout(pending);
    offFeeds();
    document.removeEventListener("visibilitychange", onVisible);
    document.title = BASE_TITLE;
    // Whoever signs in next starts afresh.
    current = null;
    notifiedUpTo = undefined;
  };
}

/** The count, kept live while any component shows it. */
export function useInboxCount(): InboxCount | null {
  const [count, setCount] = useState(current);
  useEffect(() => {
    listeners.add(setCount);
    stopWatching ??= watch();
    return () => {
      listeners.delete(setCount);
      if (listeners.size === 0) {
        stopWatching?.();
        stopWatching = null;
      }
    };
  }, []);
  return count;
}
