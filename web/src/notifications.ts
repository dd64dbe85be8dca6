/**
 * Browser notifications of what waits on the person (opt-in): the browser is asked for permission only when the
 * person turns them on, and the choice is remembered in this browser. A notification opens the item in the inbox.
 */
import { navigate } from "./router";
import type { Schemas } from "../../client";

type InboxItem = Schemas["InboxItem"];

const CHOICE_KEY = "orchestratia.notifications";

export type NotificationsState = "unsupported" | "blocked" | "off" | "on";

export function notificationsState(): NotificationsState {
  if (!("Notification" in window)) return "unsupported";
  if (Notification.permission === "denied") return "blocked";
  return Notification.permission === "granted" && localStorage.getItem(CHOICE_KEY) === "on" ? "on" : "off";
}

/** Asks the browser (once it has not been answered) and remembers the person's choice. */
export async function turnOnNotifications(): Promise<NotificationsState> {
  if (!("Notification" in window)) return "unsupported";
  const permission = Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
  if (permission === "granted") localStorage.setItem(CHOICE_KEY, "on");
  return notificationsState();
}

export function turnOffNotifications(): NotificationsState {
  localStorage.removeItem(CHOICE_KEY);
  return notificationsState();
}

export const KIND_LABELS: Record<InboxItem["kind"], string> = {
  question: "Question",
  help: "Help needed",
  approval: "Approval needed",
  plan_review: "Plan to review",
  task_approval: "Task to approve",
};

/** Where an item opens: the inbox, scrolled to it. */
export const itemPath = (item: Pick<InboxItem, "id">) => `/inbox?item=${item.id}`;

/** Shows a notification of each item, when the person turned them on; one per item, however many tabs show it. */
export function notifyOf(items: InboxItem[]) {
  if (notificationsState() !== "on") return;
  for (const item of items) {
    const what = item.question ?? (item.kind === "plan_review" ? "A plan waits for your review" : "An agent's task waits for your approval");
    const notification = new Notification(`${KIND_LABELS[item.kind]} · ${item.project.name}`, {
      body: item.task ? `${item.task.title}\n${what}` : what,
      tag: `${item.kind}:${item.id}`,
    });
    notification.onclick = () => {
      window.focus();
      navigate(itemPath(item));
      notification.close();
    };
  }
}
