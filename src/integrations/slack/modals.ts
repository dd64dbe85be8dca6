/**
 * The modals a button opens (pure): a free-text question's answer (`answer:<intervention>`) and a plan's changes
 * (`changes:<task>`). Each has one multiline input, block and action `text`; `private_metadata` keeps the message
 * clicked (`{channel, ts}`) for whoever reads the submission.
 */
import type { ModalView } from "slack-edge";
import { named, quoted } from "./command-replies";

/** Slack's limits: a modal's title 24 characters, a section's text 3,000, an input 3,000. A quote's `>` marks a line. */
const MAX_QUOTE = 1300;
export const MAX_ANSWER_CHARS = 3000;

export interface ClickedMessage {
  channel: string;
  ts: string;
}

function modal(callbackId: string, title: string, prompt: string, label: string, clicked: ClickedMessage | null): ModalView {
  return {
    type: "modal",
    callback_id: callbackId,
    title: { type: "plain_text", text: title },
    submit: { type: "plain_text", text: "Send" },
    close: { type: "plain_text", text: "Cancel" },
    private_metadata: clicked ? JSON.stringify(clicked) : "",
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: prompt } },
      {
        type: "input",
        block_id: "text",
        label: { type: "plain_text", text: label },
        element: { type: "plain_text_input", action_id: "text", multiline: true, max_length: MAX_ANSWER_CHARS },
      },
    ],
  };
}

/** The answer to a free-text question. */
export const answerModal = (iv: { id: string; question: string; taskTitle: string | null }, clicked: ClickedMessage | null) =>
  modal(`answer:${iv.id}`, "Answer", `${iv.taskTitle ? `*${named(iv.taskTitle)}*\n` : ""}${quoted(iv.question, MAX_QUOTE)}`, "Your answer", clicked);

/** The changes asked of a plan. */
export const changesModal = (task: { id: string; title: string }, clicked: ClickedMessage | null) =>
  modal(`changes:${task.id}`, "Ask for changes", `What should change in the plan of *${named(task.title)}*?`, "Changes", clicked);

/** What a modal's submission is about, from its callback id. */
export function submittedFor(callbackId: string): { kind: "answer"; interventionId: string } | { kind: "changes"; taskId: string } | null {
  const m = callbackId.match(/^(answer|changes):([0-9a-f-]{36})$/);
  if (!m) return null;
  return m[1] === "answer" ? { kind: "answer", interventionId: m[2]! } : { kind: "changes", taskId: m[2]! };
}
