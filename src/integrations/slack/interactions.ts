/**
 * A click on a button of the hub's Slack messages and a modal's submission, done as the linked person with their role.
 * What they do is done here, before Slack is answered, so its outcome is settled when the route acknowledges; a
 * refusal is what the person is told privately (a click) or shown in the modal (a submission). Updating the message
 * in place is the channel's lane's, when the settling event arrives.
 */
import type { UserRow } from "../../db/client";
import { parseButton } from "../../domain/chat-actions";
import { APPROVED, optionLabels, REJECTED } from "../../domain/question-options";
import { cutText } from "../../domain/text";
import type { WorkerEnv } from "../../runtime/worker-env";
import { accessTo, actAs, TASK_BUTTON_COMMANDS } from "../people";
import { slackClient, slackFailure } from "./api";
import { NOT_LINKED } from "./command-replies";
import { escapeMrkdwn } from "./notifications";
import { botTokenOf } from "./installations";
import { linkedPerson } from "./linked";
import { rowById } from "../chat/shard-rows";
import { answerModal, changesModal, submittedFor, type ClickedMessage } from "./modals";

export interface Click {
  teamId: string;
  slackUserId: string;
  triggerId: string;
  /** The button's value (its action id when it carries none). */
  value: string;
  clicked: ClickedMessage | null;
}

const VIEWERS = "Viewers can only read this project";
const NOT_FOUND = "Not found: the task or question is gone, or not in a project of yours";

interface Question {
  id: string;
  project_id: string;
  question: string;
  options: string | null;
  status: string;
  responded_by: string | null;
  task_title: string | null;
}

/** A question by its id alone, on whichever shard its project lives. */
const questionOf = (env: WorkerEnv, id: string) =>
  rowById<Question>(
    env,
    `SELECT i.id, i.project_id, i.question, i.options, i.status, i.responded_by, t.title AS task_title
     FROM interventions i LEFT JOIN tasks t ON t.id = i.task_id WHERE i.id = ?1`,
    id,
  );

const settled = (iv: Question) => (iv.responded_by ? `Already answered by ${iv.responded_by}` : `This question is ${iv.status} already`);

/** Answers a question as the person; a refusal because someone answered first says who. */
async function respond(env: WorkerEnv, user: UserRow, iv: Question, response: string): Promise<string | null> {
  const done = await actAs(env, user, iv.project_id, { op: "respond", interventionId: iv.id, response }, "");
  if (done.ok) return null;
  const now = await questionOf(env, iv.id);
  return now && now.status !== "pending" ? settled(now) : done.text;
}

/** Opens a modal on the person's screen (within Slack's three seconds of the click). */
async function openModal(env: WorkerEnv, teamId: string, triggerId: string, view: ReturnType<typeof answerModal>): Promise<string | null> {
  const token = await botTokenOf(env, teamId);
  if (!token) return "The Orchestratia app is not installed in this workspace any more";
  try {
    await slackClient(env, token).views.open({ trigger_id: triggerId, view });
    return null;
  } catch (e) {
    return `Slack did not open the form: ${slackFailure(e).error}`;
  }
}

/** Does what a button says; the refusal to tell the person (mrkdwn), or null when it was done. */
export async function clickButton(env: WorkerEnv, click: Click): Promise<string | null> {
  const user = await linkedPerson(env, click.teamId, click.slackUserId);
  if (!user) return NOT_LINKED;
  const refused = await clicked(env, user, click);
  return refused && escapeMrkdwn(refused);
}

/** What a linked person's click does: the refusal as plain text, or null. */
async function clicked(env: WorkerEnv, user: UserRow, click: Click): Promise<string | null> {
  const action = parseButton(click.value);
  if (!action) return "This button no longer does anything";
  if (action.kind === "answer" || action.kind === "answer_text") {
    const iv = await questionOf(env, action.interventionId);
    const access = iv ? await accessTo(env, user, iv.project_id) : "none";
    if (!iv || access === "none") return NOT_FOUND;
    if (access !== "write") return VIEWERS;
    if (iv.status !== "pending") return settled(iv);
    if (action.kind === "answer_text") {
      return openModal(env, click.teamId, click.triggerId, answerModal({ id: iv.id, question: iv.question, taskTitle: iv.task_title }, click.clicked));
    }
    const response =
      action.choice === "y" ? APPROVED : action.choice === "n" ? REJECTED : optionLabels(iv.options ? JSON.parse(iv.options) : null)[action.choice];
    if (response === undefined) return "That option is gone";
    return respond(env, user, iv, response);
  }
  const task = await rowById<{ id: string; project_id: string; title: string; status: string }>(
    env,
    "SELECT id, project_id, title, status FROM tasks WHERE id = ?1",
    action.taskId,
  );
  const access = task ? await accessTo(env, user, task.project_id) : "none";
  if (!task || access === "none") return NOT_FOUND;
  if (action.kind === "revise_plan") {
    if (access !== "write") return VIEWERS;
    if (task.status !== "plan_review") return `The plan is no longer waiting for review (the task is ${task.status})`;
    return openModal(env, click.teamId, click.triggerId, changesModal(task, click.clicked));
  }
  const { command } = TASK_BUTTON_COMMANDS[action.kind](task.id);
  const done = await actAs(env, user, task.project_id, command, "");
  return done.ok ? null : done.text;
}

export interface Submission {
  teamId: string;
  slackUserId: string;
  callbackId: string;
  text: string;
}

/** Slack shows a modal's error under its input, as plain text: the not-linked note without its mrkdwn, the rest cut. */
const NOT_LINKED_PLAIN = NOT_LINKED.replace(/[*`]/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">");
const modalError = (text: string) => cutText(text, 300, "…");

/** Sends what a modal asks for; the error to show in it, or null when it was done (the modal closes). */
export async function submitModal(env: WorkerEnv, s: Submission): Promise<string | null> {
  const about = submittedFor(s.callbackId);
  if (!about) return "This form no longer does anything";
  const text = s.text.trim();
  if (!text) return about.kind === "answer" ? "Write an answer first" : "Say what should change first";
  const user = await linkedPerson(env, s.teamId, s.slackUserId);
  if (!user) return NOT_LINKED_PLAIN;
  if (about.kind === "answer") {
    const iv = await questionOf(env, about.interventionId);
    if (!iv || (await accessTo(env, user, iv.project_id)) === "none") return NOT_FOUND;
    if (iv.status !== "pending") return settled(iv);
    const refused = await respond(env, user, iv, text);
    return refused && modalError(refused);
  }
  const task = await rowById<{ project_id: string }>(env, "SELECT project_id FROM tasks WHERE id = ?1", about.taskId);
  if (!task || (await accessTo(env, user, task.project_id)) === "none") return NOT_FOUND;
  const done = await actAs(env, user, task.project_id, { op: "revise_plan", taskId: about.taskId, feedback: text }, "");
  return done.ok ? null : modalError(done.text);
}
