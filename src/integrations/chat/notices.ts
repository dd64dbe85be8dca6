/**
 * What a chat notification says, whichever chat sets it (Telegram's HTML, Slack's mrkdwn): its heading and its
 * paragraphs as plain text, each marked for how it is set: `quote` is text from elsewhere (a question, an error), which
 * the chat cuts shorter; `pre` is preformatted (a plan). The chats escape it, add the project and task, their own
 * buttons and markers (pure).
 */
import { budgetLabel, spendText } from "../../domain/budgets";
import { cutText } from "../../domain/text";

export interface Paragraph {
  text: string;
  as: "plain" | "quote" | "pre";
}

export interface ChatNotice {
  heading: string;
  paragraphs: Paragraph[];
}

export interface NotifiedEvent {
  type: string;
  task_id: string | null;
  data: Record<string, unknown>;
}

/** Longest name quoted inside a sentence (who created a task). */
const MAX_NAME = 200;

const plain = (text: string): Paragraph => ({ text, as: "plain" });
const quote = (value: unknown): Paragraph => ({ text: textOf(value), as: "quote" });

/** A value from elsewhere as text: strings as they are, anything else as indented JSON. */
export const textOf = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value ?? "", null, 2));

/** What each budget event says, after the budget and its spend. */
const BUDGET_NEWS: Record<string, [heading: string, news: string]> = {
  budget_warned: ["Budget warning", "Nothing is held yet."],
  budget_held: ["Budget hold", "No new task in its scope is assigned or started until it is raised; running tasks were told."],
  budget_stopped: ["Budget stop", "Its running tasks were moved to needs human: raise the budget, then answer them to go on."],
  budget_released: ["Budget released", "Tasks in its scope may be assigned and started again."],
};

/** A budget event: which budget, what it has spent of its limit, and what follows. */
function budgetNotice(type: string, d: Record<string, unknown>): ChatNotice {
  const [heading, news] = BUDGET_NEWS[type]!;
  const spent = (d.spent ?? {}) as { cost_usd?: number; tokens?: number };
  const label = budgetLabel({
    scope: d.scope === "graph" ? "graph" : "project",
    period: d.period === "month" ? "month" : d.period === "day" ? "day" : null,
    taskId: typeof d.task_id === "string" ? d.task_id : null,
  });
  const spend = spendText({
    limitUsd: typeof d.limit_usd === "number" ? d.limit_usd : null,
    limitTokens: typeof d.limit_tokens === "number" ? d.limit_tokens : null,
    spentUsd: Number(spent.cost_usd) || 0,
    spentTokens: Number(spent.tokens) || 0,
  });
  return { heading, paragraphs: [plain(`${label.charAt(0).toUpperCase() + label.slice(1)} has spent ${spend}. ${news}`)] };
}

/** Why no server can take a task: the reason, and each server's. */
function unassignableText(d: Record<string, unknown>) {
  const servers = Array.isArray(d.servers) ? (d.servers as { server_name?: unknown; reason?: unknown }[]) : [];
  return [String(d.reason ?? ""), ...servers.map((s) => `• ${String(s.server_name)}: ${String(s.reason)}`)].join("\n");
}

/** A failing code review: sent back to its agent, or not reviewable; a fail on the last attempt is told by review_exhausted. */
function reviewFailedNotice(d: Record<string, unknown>): ChatNotice | null {
  const attempts = `attempt ${String(d.round ?? d.attempt)} of ${Number(d.max_retries) + 1}`;
  if (d.status === "error") {
    // Asked of a person instead, the question (intervention_requested) says it.
    if (d.action === "needs_human") return null;
    return { heading: "Code review could not be made", paragraphs: [quote(String(d.error ?? "")), plain(`The task stays done (${attempts}).`)] };
  }
  if (d.fix_requested !== true) return null;
  return {
    heading: "Code review failed",
    paragraphs: [plain(`Score ${String(d.score)}/100 · ${attempts}: sent back to its agent to fix.`), quote(d.summary ?? "")],
  };
}

/** What a chat is told of an event (CHAT_EVENTS), or null for one it does not speak of. `plan` is the task's, for plan_submitted. */
export function chatNotice(e: NotifiedEvent, plan?: unknown): ChatNotice | null {
  const d = e.data;
  switch (e.type) {
    case "intervention_requested":
      return { heading: d.intervention_type === "approval" ? "Approval needed" : "Question", paragraphs: [quote(d.question)] };
    case "task_awaiting_approval":
      if (!e.task_id) return null;
      return {
        heading: "Task to approve",
        paragraphs: [plain(`${cutText(String(d.created_by ?? "An agent"), MAX_NAME, "…")} created it; it waits for a person's approval before it may start.`)],
      };
    case "plan_submitted":
      return e.task_id ? { heading: "Plan to review", paragraphs: [{ text: textOf(plan), as: "pre" }] } : null;
    case "task_failed":
      return e.task_id ? { heading: "Task failed", paragraphs: [quote(d.error ?? "no error given")] } : null;
    case "task_completed":
      return { heading: "Task done", paragraphs: typeof d.summary === "string" && d.summary ? [quote(d.summary)] : [] };
    case "budget_warned":
    case "budget_held":
    case "budget_stopped":
    case "budget_released":
      return budgetNotice(e.type, d);
    case "task_stalled":
      // Moved to needs_human, it is asked about as a question (intervention_requested): that message says it.
      if (d.action === "needs_human") return null;
      return { heading: "Task stalled", paragraphs: [quote(`Nothing heard of it: ${String(d.reason ?? "")}`)] };
    case "task_unassignable":
      return { heading: "No server can take this task", paragraphs: [quote(unassignableText(d))] };
    case "review_failed":
      return reviewFailedNotice(d);
    case "review_exhausted":
      // Moved to needs_human, it is asked about as a question: that message says it.
      if (d.action === "needs_human") return null;
      return {
        heading: "Code review failed on its last attempt",
        paragraphs: [plain(`Score ${String(d.score)}/100 after ${String(d.round ?? d.attempt)} attempts: the task stays done with a failing review.`)],
      };
    case "server_offline":
      return { heading: "Server offline", paragraphs: [plain(`${String(d.server_name ?? "a server")} stopped answering`)] };
    default:
      return null;
  }
}
