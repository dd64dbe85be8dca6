/**
 * What a Slack channel is posted (pure): Block Kit messages for the events it picked (CHAT_EVENTS), the words shared
 * with Telegram (chat/notices.ts), set in mrkdwn with `&`, `<` and `>` escaped, and cut to what Slack takes (3,000
 * characters a section, 75 a button's text). A message that asks for something carries the subject it is recorded
 * under (`iv:<intervention>`, `ap:<task>`, `plan:<task>`, `fail:<task>`), so the event that settles it (SETTLING_EVENTS)
 * updates it in place: the same message without its buttons, saying who settled it and how.
 */
import type { ActionsBlock, AnyMessageBlock, Button, ContextBlock, SectionBlock } from "slack-edge";
import { optionLabels } from "../../domain/question-options";
import { cutText } from "../../domain/text";
import { chatNotice, textOf, type NotifiedEvent, type Paragraph } from "../chat/notices";

/** Slack's limits: a section's text, a context element's, a button's text, blocks in a message. */
export const MAX_SECTION = 3000;
export const MAX_BUTTON_TEXT = 75;
export const MAX_BLOCKS = 50;
/** Longest text from elsewhere (a question, an error, a plan) before it is escaped and set. */
const MAX_QUOTE = 2500;
/** Longest names in the context line (a project's, a task's title). */
const MAX_NAME = 200;
/** Longest answer or feedback quoted where a message is settled. */
const MAX_ANSWER = 500;

export const escapeMrkdwn = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Escaped text at most `max` long: cut after escaping, never inside an entity, so Slack's count is the one that holds. */
export function escapedCut(text: string, max: number): string {
  const escaped = escapeMrkdwn(text.toWellFormed());
  if (escaped.length <= max) return escaped;
  let cut = cutText(escaped, max - 1);
  const amp = cut.lastIndexOf("&");
  if (amp >= 0 && !cut.slice(amp).includes(";")) cut = cut.slice(0, amp);
  return `${cut}…`;
}

export interface SlackContext {
  projectName: string;
  taskTitle: string | null;
  /** The task's page on the dashboard, which the title links to. */
  taskUrl: string | null;
  /** The task's plan, for plan_submitted. */
  plan?: unknown;
  /** The question's options, for intervention_requested. */
  options?: unknown;
}

export interface SlackMessage {
  /** What notifications and screen readers show: the heading, project and task. */
  text: string;
  blocks: AnyMessageBlock[];
  /** What the message is recorded under so a later event updates it; null for one nothing settles. */
  subject: string | null;
  buttons: Button[];
}

const button = (text: string, value: string, style?: "primary" | "danger"): Button => ({
  type: "button",
  text: { type: "plain_text", text: cutText(text, MAX_BUTTON_TEXT, "…"), emoji: true },
  action_id: value,
  value,
  ...(style ? { style } : {}),
});

const section = (text: string): SectionBlock => ({ type: "section", text: { type: "mrkdwn", text } });

function paragraphBlock(p: Paragraph): SectionBlock {
  if (p.as === "pre") return section(`\`\`\`${escapedCut(p.text, Math.min(MAX_QUOTE, MAX_SECTION - 6))}\`\`\``);
  return section(escapedCut(p.text, p.as === "quote" ? MAX_QUOTE : MAX_SECTION));
}

/** The line under a message: its project, and its task linking to the dashboard. */
function contextLine(ctx: SlackContext): ContextBlock {
  const project = escapedCut(ctx.projectName, MAX_NAME);
  const title = ctx.taskTitle === null ? null : escapedCut(ctx.taskTitle, MAX_NAME);
  const task = title === null ? "" : ctx.taskUrl ? ` · <${escapeMrkdwn(ctx.taskUrl)}|${title}>` : ` · ${title}`;
  return { type: "context", elements: [{ type: "mrkdwn", text: `${project}${task}` }] };
}

/** The buttons a message offers, and the subject it is settled under. */
function asks(e: NotifiedEvent, ctx: SlackContext): { subject: string | null; buttons: Button[] } {
  const d = e.data;
  switch (e.type) {
    case "intervention_requested": {
      const id = String(d.intervention_id ?? "");
      if (d.intervention_type === "approval")
        return { subject: `iv:${id}`, buttons: [button("Approve", `iv:${id}:y`, "primary"), button("Deny", `iv:${id}:n`, "danger")] };
      const options = optionLabels(ctx.options).map((label, i) => button(label, `iv:${id}:${i}`));
      // A question with no options is answered in words: the button opens a form.
      return { subject: `iv:${id}`, buttons: options.length > 0 ? options : [button("Answer", `it:${id}`, "primary")] };
    }
    case "task_awaiting_approval":
      return { subject: `ap:${e.task_id}`, buttons: [button("Approve", `ap:${e.task_id}`, "primary")] };
    case "plan_submitted":
      return { subject: `plan:${e.task_id}`, buttons: [button("Approve plan", `pa:${e.task_id}`, "primary"), button("Ask for changes", `pr:${e.task_id}`)] };
    case "task_failed":
      return { subject: `fail:${e.task_id}`, buttons: [button("Retry", `rt:${e.task_id}`)] };
    default:
      return { subject: null, buttons: [] };
  }
}

/** The message a channel is posted for an event, or null for one Slack does not speak of. */
export function notification(e: NotifiedEvent, ctx: SlackContext): SlackMessage | null {
  const notice = chatNotice(e, ctx.plan);
  if (!notice) return null;
  const { subject, buttons } = asks(e, ctx);
  const blocks: AnyMessageBlock[] = [section(`*${escapeMrkdwn(notice.heading)}*`), ...notice.paragraphs.map(paragraphBlock)].slice(0, MAX_BLOCKS - 2);
  blocks.push(contextLine(ctx));
  if (buttons.length > 0) blocks.push({ type: "actions", block_id: "actions", elements: buttons } satisfies ActionsBlock);
  const title = ctx.taskTitle === null ? "" : ` · ${cutText(ctx.taskTitle, MAX_NAME, "…")}`;
  return { text: escapedCut(`${notice.heading} · ${cutText(ctx.projectName, MAX_NAME, "…")}${title}`, MAX_SECTION), blocks, subject, buttons };
}

/** The event a subject's message was posted for, by the subject's kind. */
export const POSTED_FOR = { iv: "intervention_requested", ap: "task_awaiting_approval", plan: "plan_submitted", fail: "task_failed" } as const;

/** The events that settle a subject's message, by the subject's kind. */
export const SETTLED_BY = {
  iv: ["intervention_responded", "intervention_timed_out"],
  ap: ["task_approved"],
  plan: ["plan_approved", "plan_revision_requested"],
  fail: ["task_retried", "task_cancelled"],
} as const;

/** The kinds of a task's messages that still ask something until the task ends (TASK_ENDING_EVENTS settle them). */
export const ASKING_KINDS = ["iv", "ap", "plan"] as const;

/** The subject of the message an event settles, or null for an event that settles none. */
export function settledSubject(e: NotifiedEvent): string | null {
  switch (e.type) {
    case "intervention_responded":
    case "intervention_timed_out":
      return typeof e.data.intervention_id === "string" ? `iv:${e.data.intervention_id}` : null;
    case "task_approved":
      return e.task_id ? `ap:${e.task_id}` : null;
    case "plan_approved":
    case "plan_revision_requested":
      return e.task_id ? `plan:${e.task_id}` : null;
    case "task_retried":
    case "task_cancelled":
      return e.task_id ? `fail:${e.task_id}` : null;
    default:
      return null;
  }
}

/** How a settling event settled its message, and by whom. */
export function settlement(e: NotifiedEvent, actor: string | null): string {
  const by = cutText(actor ?? "someone", MAX_NAME, "…");
  const said = (value: unknown) => cutText(textOf(value), MAX_ANSWER, "…");
  switch (e.type) {
    case "intervention_responded":
      return `Answered by ${by}: ${said(e.data.response)}`;
    case "intervention_timed_out":
      return "Timed out";
    case "task_approved":
    case "plan_approved":
      return `Approved by ${by}`;
    case "plan_revision_requested":
      return `Changes asked by ${by}: ${said(e.data.feedback)}`;
    case "task_retried":
      return `Retried by ${by}`;
    case "task_cancelled":
      return `Task cancelled by ${by}`;
    case "task_failed":
      return "Task failed";
    case "task_completed":
      return "Task done";
    default:
      return `Settled by ${by}`;
  }
}

/** A message as it reads once settled: its words without its buttons, and a line saying how it was settled. */
export function settled(original: SlackMessage, line: string): SlackMessage {
  const blocks = original.blocks.filter((b) => b.type !== "actions");
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: escapedCut(line, MAX_SECTION) }] });
  return { text: escapedCut(`${line} · `, MAX_SECTION) + original.text, blocks, subject: original.subject, buttons: [] };
}
