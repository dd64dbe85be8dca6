/** What waits on a person, as the inbox API returns it: each item with its project, its task, who asks and when. */
import { z } from "zod";
import { PRIORITIES } from "../db/schema";
import type { InboxQuestionRow, InboxTaskRow } from "../db/inbox";
import { TASK_STATUSES } from "../domain/lifecycle";
import { optionLabels } from "../domain/question-options";
import { cutText } from "../domain/text";
import { id, json, timestamp } from "./fields";

export const INBOX_KINDS = ["question", "help", "approval", "plan_review", "task_approval"] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

/** The longest spec an item to approve carries: the task's page has the rest. */
const MAX_SPEC = 2000;

const named = z.object({ id, name: z.string() });

export const inboxItemSchema = z
  .object({
    kind: z.enum(INBOX_KINDS).meta({
      description:
        "`question`, `help`, `approval`: an agent's intervention (answer with POST /api/v1/interventions/{id}/respond; an approval is answered " +
        "`approved` or `rejected`). `plan_review`: a plan to approve or revise (POST /api/v1/tasks/{id}/approve-plan, /revise-plan). " +
        "`task_approval`: a task an agent created that waits for approval (POST /api/v1/tasks/{id}/approve, or DELETE /api/v1/tasks/{id} to reject it).",
    }),
    id: id.meta({ description: "The intervention's id (question, help, approval), or the task's (plan_review, task_approval)" }),
    project: named,
    task: z
      .object({ id, title: z.string(), status: z.enum(TASK_STATUSES), priority: z.enum(PRIORITIES) })
      .nullable()
      .meta({ description: "The task it is about; null for a question an agent asked outside any task" }),
    asked_at: timestamp.meta({ description: "When it began to wait: asked, created, or (a plan) submitted" }),
    asked_by: z.object({
      label: z.string().meta({ description: "`agent:<server name>`, or who created the task" }),
      server: named.nullable().meta({ description: "The server of the agent that asks" }),
      session: named.nullable().meta({ description: "The session of the agent that asks" }),
    }),
    question: z.string().nullable().meta({ description: "The question's text (interventions)" }),
    options: z.array(z.string()).meta({ description: "The answers the agent offered, if any: send one as the response" }),
    context: json.meta({ description: "What the agent sent with its question, as sent (null for none)" }),
    plan: json.meta({ description: "The plan to review (plan_review), null otherwise" }),
    spec: z
      .string()
      .nullable()
      .meta({ description: `The task's spec, at most ${MAX_SPEC} characters (task_approval)` }),
    expires_at: timestamp.nullable().meta({ description: "Until when the agent waits for the answer, if it said" }),
    can_answer: z.boolean().meta({ description: "Whether the caller may answer it (members and admins; viewers only read)" }),
    unread: z.boolean().meta({ description: "Whether it arrived after the caller last saw the inbox, and waits on the caller" }),
  })
  .meta({ id: "InboxItem" });
export type InboxItem = z.infer<typeof inboxItemSchema>;

export const inboxSchema = z
  .object({
    items: z.array(inboxItemSchema).meta({ description: "Newest first" }),
    unread: z.int().meta({ description: "How many items are unread" }),
    seen_at: timestamp.nullable().meta({ description: "Up to when the caller has seen the inbox (null: never)" }),
  })
  .meta({ id: "Inbox" });

export const inboxCountSchema = z
  .object({
    unread: z.int().meta({ description: "Items the caller can answer that arrived after `seen_at`" }),
    newest_at: timestamp.nullable().meta({ description: "When the newest item the caller can answer arrived" }),
    seen_at: timestamp.nullable(),
  })
  .meta({ id: "InboxCount" });

/** A JSON column read by a raw query: its value, or null. */
function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const nameOf = (rowId: string | null, name: string | null) => (rowId && name !== null ? { id: rowId, name } : null);

/** What the view needs of the caller, per project: its name, and whether the caller may answer there. */
export interface InboxScope {
  projects: Map<string, { name: string; canAnswer: boolean }>;
  seenAt: string | null;
}

function common(scope: InboxScope, projectId: string, askedAt: string) {
  const project = scope.projects.get(projectId)!;
  const canAnswer = project.canAnswer;
  return {
    project: { id: projectId, name: project.name },
    asked_at: askedAt,
    can_answer: canAnswer,
    unread: canAnswer && (scope.seenAt === null || askedAt > scope.seenAt),
  };
}

export const questionItem = (r: InboxQuestionRow, scope: InboxScope): InboxItem => ({
  kind: r.intervention_type,
  id: r.id,
  ...common(scope, r.project_id, r.created_at),
  task: r.task_id && r.task_title !== null ? { id: r.task_id, title: r.task_title, status: r.task_status!, priority: r.task_priority! } : null,
  asked_by: { label: r.asked_by, server: nameOf(r.server_id, r.server_name), session: nameOf(r.session_id, r.session_name) },
  question: r.question,
  options: optionLabels(parsed(r.options)),
  context: parsed(r.context),
  plan: null,
  spec: null,
  expires_at: r.expires_at,
});

export const taskItem = (r: InboxTaskRow, scope: InboxScope): InboxItem => {
  const toApprove = r.awaiting_approval === 1;
  return {
    kind: toApprove ? "task_approval" : "plan_review",
    id: r.id,
    ...common(scope, r.project_id, r.asked_at),
    task: { id: r.id, title: r.title, status: r.status, priority: r.priority },
    asked_by: {
      label: toApprove ? r.created_by : r.server_name ? `agent:${r.server_name}` : r.created_by,
      server: nameOf(r.server_id, r.server_name),
      session: nameOf(r.session_id, r.session_name),
    },
    question: null,
    options: [],
    context: null,
    plan: toApprove ? null : parsed(r.plan),
    spec: toApprove ? cutText(r.spec, MAX_SPEC, "…") : null,
    expires_at: null,
  };
};

/** Both kinds of rows as one list, newest first. */
export const inboxItems = (questions: InboxQuestionRow[], tasks: InboxTaskRow[], scope: InboxScope): InboxItem[] =>
  [...questions.map((r) => questionItem(r, scope)), ...tasks.map((r) => taskItem(r, scope))].sort((a, b) =>
    a.asked_at < b.asked_at ? 1 : a.asked_at > b.asked_at ? -1 : a.id < b.id ? -1 : 1,
  );
