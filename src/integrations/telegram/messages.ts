/**
 * What the bot says and what its buttons and replies mean (pure). Messages
 * use Telegram's HTML parse mode, so every piece of text from elsewhere is
 * escaped. Buttons carry what they act on in their callback data (at most 64
 * bytes); a reply is matched to what it answers by the marker at the end of
 * the message it replies to ("Question #1a2b3c4d", "Plan #1a2b3c4d"). Text is
 * cut between code points (domain/text.ts): Telegram refuses half an emoji.
 */
import { CHAT_EVENTS } from "../../domain/chat-events";
export { parseButton } from "../../domain/chat-actions";
import { optionLabels } from "../../domain/question-options";
import { cutText } from "../../domain/text";
import { DENIED_EVENT, type DeniedSummary } from "./denied-calls";
import { WAITING_ON_PEOPLE, type ListedTask } from "../chat/listed-task";
import { chatNotice, type NotifiedEvent, type Paragraph } from "../chat/notices";

/** The events a linked person hears of. */
export const TELEGRAM_EVENTS = CHAT_EVENTS;

/**
 * Longest piece quoted from elsewhere (a question, a plan, an error), cut
 * before it is escaped, so a message's text stays well under Telegram's 4,096
 * characters (counted after parsing) and no entity is cut in half.
 */
const MAX_QUOTE = 1500;
/** Longest names in a heading (a project's, a task's title). */
const MAX_NAME = 200;
/** Telegram's limit for the text a button's answer shows. */
export const MAX_ANSWER = 200;

export const escapeHtml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const quote = (value: unknown) => {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "", null, 2);
  return escapeHtml(cutText(text, MAX_QUOTE, "…"));
};

export interface Button {
  text: string;
  callback_data: string;
}

export interface Outgoing {
  text: string;
  buttons: Button[][];
  /** Asks the person to answer by replying to the message. */
  forceReply?: boolean;
}

/** What a notification needs beyond its event. */
export interface NotificationContext {
  projectName: string;
  taskTitle: string | null;
  /** The task's plan, for plan_submitted. */
  plan?: unknown;
  /** The question's options, for intervention_requested. */
  options?: unknown;
  /** Sessions' and rules' names by id, for permissions_denied. */
  names?: ReadonlyMap<string, string>;
  /** Tasks' titles by id, for permissions_denied. */
  taskTitles?: ReadonlyMap<string, string>;
}

export type { NotifiedEvent };

const short = (id: string) => id.slice(0, 8);

const name = (text: string, max = MAX_NAME) => escapeHtml(cutText(text, max, "…"));

function heading(kind: string, ctx: NotificationContext) {
  return `<b>${kind}</b> · ${name(ctx.projectName)}${ctx.taskTitle ? ` · ${name(ctx.taskTitle)}` : ""}`;
}

/** Denied calls of a project: how many, and the first few with their session, task and the rule that denied them. */
function deniedText(summary: DeniedSummary, ctx: NotificationContext) {
  const count = Number(summary.count) || 0;
  const calls = Array.isArray(summary.calls) ? summary.calls : [];
  const named = (id: string | null, names: ReadonlyMap<string, string> | undefined) => (id ? name(names?.get(id) ?? short(id), MAX_LISTED_NAME) : null);
  const lines = calls.map((call) => {
    const session = named(call.session_id, ctx.names);
    const task = named(call.task_id, ctx.taskTitles);
    const rule = named(call.matched_rule_id, ctx.names);
    return [
      `• <b>${name(String(call.tool_name), MAX_LISTED_NAME)}</b> <code>${quote(String(call.tool_input))}</code>`,
      `  ${session ? `session ${session}` : "no session"}${task ? ` · task ${task}` : ""} · ${rule ? `rule ${rule}` : "no rule"}${call.reason ? ` · ${name(call.reason, MAX_LISTED_NAME)}` : ""}`,
    ].join("\n");
  });
  const more = count - calls.length;
  return [
    `<b>${count === 1 ? "1 tool call denied" : `${count} tool calls denied`}</b> · ${name(ctx.projectName)}`,
    "",
    ...lines,
    ...(more > 0 ? [`…and ${more} more (see the project's permission log)`] : []),
  ].join("\n");
}

/** Telegram's setting of a paragraph: text from elsewhere cut shorter, a plan preformatted. */
const paragraph = (p: Paragraph) => (p.as === "plain" ? escapeHtml(p.text) : p.as === "pre" ? `<pre>${quote(p.text)}</pre>` : quote(p.text));

/** The message a notification is, or null for an event the bot does not speak of. */
export function notification(e: NotifiedEvent, ctx: NotificationContext): Outgoing | null {
  const d = e.data;
  if (e.type === DENIED_EVENT) return { text: deniedText(d as unknown as DeniedSummary, ctx), buttons: [] };
  if (e.type === "server_offline")
    return { text: `<b>Server offline</b> · ${name(String(d.server_name ?? "a server"))} stopped answering (${name(ctx.projectName)})`, buttons: [] };
  const notice = chatNotice(e, ctx.plan);
  if (!notice) return null;
  const text = (...more: string[]) => [heading(notice.heading, ctx), ...notice.paragraphs.map(paragraph), ...more].join("\n\n");
  const id = String(d.intervention_id ?? "");
  switch (e.type) {
    case "intervention_requested":
      if (d.intervention_type === "approval") {
        return {
          text: text(`Question #${short(id)}`),
          buttons: [
            [
              { text: "Approve", callback_data: `iv:${id}:y` },
              { text: "Reject", callback_data: `iv:${id}:n` },
            ],
          ],
        };
      }
      return {
        text: text(`Reply to this message to answer. Question #${short(id)}`),
        buttons: optionLabels(ctx.options).map((label, i) => [{ text: cutText(label, 60), callback_data: `iv:${id}:${i}` }]),
      };
    case "task_awaiting_approval":
      return { text: text(), buttons: [[{ text: "Approve", callback_data: `ap:${e.task_id}` }]] };
    case "plan_submitted":
      return {
        text: text(`Plan #${short(e.task_id!)}`),
        buttons: [
          [
            { text: "Approve plan", callback_data: `pa:${e.task_id}` },
            { text: "Ask for changes", callback_data: `pr:${e.task_id}` },
          ],
        ],
      };
    case "task_failed":
      return { text: text(), buttons: [[{ text: "Retry", callback_data: `rt:${e.task_id}` }]] };
    default:
      return { text: text(), buttons: [] };
  }
}

/** Longest names in a list line: a full list stays well under Telegram's 4,096 characters. */
const MAX_LISTED_NAME = 80;

/** /tasks: the open tasks listed (those waiting on a person first, as given), and how many more there are. */
export function openTaskList(tasks: readonly ListedTask[], total: number): string {
  if (tasks.length === 0) return "No open tasks in the projects you watch.";
  const line = (t: ListedTask) =>
    `<code>${short(t.id)}</code> ${name(t.title, MAX_LISTED_NAME)} · <i>${t.awaiting_approval ? "awaiting approval" : t.status}</i> · ${name(t.project, MAX_LISTED_NAME)}`;
  const needsPerson = (t: ListedTask) => WAITING_ON_PEOPLE.includes(t.status) || t.awaiting_approval === 1;
  const waiting = tasks.filter(needsPerson);
  const others = tasks.filter((t) => !needsPerson(t));
  return [
    ...(waiting.length ? ["<b>Needs you</b>", ...waiting.map(line)] : []),
    ...(others.length ? [`${waiting.length ? "\n" : ""}<b>Running and waiting</b>`, ...others.map(line)] : []),
    ...(total > tasks.length ? [`\n…and ${total - tasks.length} more open ${total - tasks.length === 1 ? "task" : "tasks"} (see the dashboard)`] : []),
  ].join("\n");
}

/** A button's answer, cut to what Telegram shows. */
export const answerText = (text: string) => cutText(text, MAX_ANSWER, "…");

/** What a reply answers, from the message it replies to. */
export function replyTarget(repliedTo: string | undefined): { kind: "question" | "plan"; prefix: string } | null {
  const m = repliedTo?.match(/(Question|Plan) #([0-9a-f]{8})\s*$/);
  return m ? { kind: m[1] === "Question" ? "question" : "plan", prefix: m[2]! } : null;
}

/** The prompt that asks for a plan's changes as a reply. */
export const changesPrompt = (taskId: string, title: string) =>
  `What should change in the plan of <b>${escapeHtml(title)}</b>? Reply to this message.\n\nPlan #${short(taskId)}`;
