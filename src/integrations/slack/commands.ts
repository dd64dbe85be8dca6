/**
 * `/orc <command>` in Slack: what was typed (pure), and doing it as the linked person, with their role. The answer is
 * private; the route acknowledges at once and posts it to the command's response_url.
 */
import type { UserRow } from "../../db/client";
import type { WorkerEnv } from "../../runtime/worker-env";
import { executeInRoom, HUB_ACTOR } from "../../runtime/room-rpc";
import { accessTo, actAs, findVisible, visibleProjects } from "../people";
import { openTasksOf } from "../chat/open-tasks";
import { parseRunCommand } from "../chat/run-command";
import { templateNamed } from "../chat/templates";
import { homeD1 } from "../../db/shards";
import { HELP, named, NOT_LINKED, openTaskReply, projectNames, said, taskReply } from "./command-replies";
import { escapeMrkdwn } from "./notifications";
import { channelRefusal } from "./channel-check";
import { botTokenOf } from "./installations";
import { linkedPerson, redeemLinkCode } from "./linked";
import type { EphemeralReply } from "./response-url";

export const SUBCOMMANDS = ["help", "link", "tasks", "task", "watch", "mute", "run"] as const;
export type Subcommand = (typeof SUBCOMMANDS)[number];

/** The sub-command and what follows it; anything unknown is `help`. */
/** Slack sends a command's `&`, `<` and `>` as HTML entities: the text as typed. */
export const typedText = (text: string) => text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

export function parseOrc(text: string): { sub: Subcommand; rest: string } {
  const m = typedText(text)
    .trim()
    .match(/^(\S+)\s*([\s\S]*)$/);
  const word = m?.[1]!.toLowerCase();
  return m && (SUBCOMMANDS as readonly string[]).includes(word!) ? { sub: word as Subcommand, rest: m[2]!.trim() } : { sub: "help", rest: "" };
}

/** Where a command was typed, by whom, and the hub's base URL for links. */
export interface OrcContext {
  teamId: string;
  slackUserId: string;
  channelId: string;
  baseUrl: string;
}

type Project = { id: string; name: string; slug: string };

const RUN_USAGE = "/orc run <template> [name=value …]";

export async function runOrc(env: WorkerEnv, at: OrcContext, text: string): Promise<EphemeralReply> {
  const { sub, rest } = parseOrc(text);
  if (sub === "help") return said(HELP);
  if (!(await botTokenOf(env, at.teamId))) return said("The Orchestratia app is not installed in this workspace: ask an admin of the hub to install it.");
  if (sub === "link") {
    if (!rest) return said("Which code? `/orc link &lt;code&gt;`: the hub's *Account* page gives one under *Link Slack*.");
    const email = await redeemLinkCode(env, rest, at.teamId, at.slackUserId);
    return said(email ? `Linked to *${named(email)}*.\n\n${HELP}` : "That code has expired or was used already: ask the hub for a new one.");
  }
  const user = await linkedPerson(env, at.teamId, at.slackUserId);
  if (!user) return said(NOT_LINKED);
  switch (sub) {
    case "tasks":
      return tasks(env, at, user);
    case "task":
      return task(env, at, user, rest);
    case "watch":
      return watch(env, at, user, rest);
    case "mute":
      return mute(env, at, user);
    case "run":
      return run(env, user, rest);
  }
}

/** The projects a channel posts. */
const channelProjects = async (env: WorkerEnv, at: OrcContext) =>
  (
    await env.DB.prepare("SELECT id, project_id, muted FROM slack_channels WHERE team_id = ?1 AND channel_id = ?2")
      .bind(at.teamId, at.channelId)
      .all<{ id: string; project_id: string; muted: number }>()
  ).results;

async function tasks(env: WorkerEnv, at: OrcContext, user: UserRow) {
  const visible = await visibleProjects(env, user);
  const posted = new Set((await channelProjects(env, at)).map((r) => r.project_id));
  const here = visible.filter((p) => posted.has(p.id));
  const projects = here.length ? here : visible;
  if (projects.length === 0) return said("You are in no project yet.");
  const { tasks, total } = await openTasksOf(
    env,
    projects.map((p) => p.id),
  );
  return openTaskReply(tasks, total, here.length ? "the projects this channel posts" : "your projects");
}

async function task(env: WorkerEnv, at: OrcContext, user: UserRow, prefix: string) {
  const found = await findVisible(env, user, "tasks", prefix.toLowerCase());
  if (!found) return said("No task of yours starts with that: `/orc task &lt;id prefix&gt;` (four characters or more)");
  // Read where the project lives: its shard keeps copies of the project's row and the servers.
  const t = await (
    await homeD1(env, found.projectId)
  )
    .prepare(
      `SELECT t.id, t.title, t.status, t.priority, t.result, p.name AS project, s.name AS server
     FROM tasks t JOIN projects p ON p.id = t.project_id LEFT JOIN servers s ON s.id = t.assigned_server_id WHERE t.id = ?1`,
    )
    .bind(found.id)
    .first<{ id: string; title: string; status: string; priority: string; result: string | null; project: string; server: string | null }>();
  if (!t) return said("That task is gone.");
  const result = t.result ? (JSON.parse(t.result) as Record<string, unknown>) : null;
  const outcome = typeof result?.summary === "string" ? result.summary : typeof result?.error === "string" ? result.error : null;
  return taskReply({ ...t, outcome }, `${at.baseUrl}/projects/${found.projectId}/tasks/${t.id}`);
}

/** The person's project named (by slug, name, or the start of its name). */
async function projectNamed(env: WorkerEnv, user: UserRow, wanted: string): Promise<Project | undefined> {
  const w = wanted.trim().toLowerCase();
  if (!w) return undefined;
  const projects = await visibleProjects(env, user);
  return projects.find((p) => p.slug.toLowerCase() === w || p.name.toLowerCase() === w) ?? projects.find((p) => p.name.toLowerCase().startsWith(w));
}

async function watch(env: WorkerEnv, at: OrcContext, user: UserRow, wanted: string) {
  const project = await projectNamed(env, user, wanted);
  if (!project) return said("Which project? `/orc watch &lt;project name or slug&gt;`, one of yours.");
  if ((await accessTo(env, user, project.id)) !== "write")
    return said(`Viewers can only read *${named(project.name)}*: ask one of its members to watch it here.`);
  const watching = await env.DB.prepare("SELECT id FROM slack_channels WHERE project_id = ?1 AND team_id = ?2 AND channel_id = ?3")
    .bind(project.id, at.teamId, at.channelId)
    .first();
  if (!watching) {
    // The app must be able to post here before the channel is said to post the project.
    const refusal = await channelRefusal(env, at.teamId, at.channelId).catch(() => ({ reason: "Slack did not answer: try again" }));
    if (refusal) return said(`Not watching *${named(project.name)}* here: ${escapeMrkdwn(refusal.reason)}.`);
  }
  const removed =
    watching &&
    (await env.DB.prepare("DELETE FROM slack_channels WHERE project_id = ?1 AND team_id = ?2 AND channel_id = ?3 RETURNING id")
      .bind(project.id, at.teamId, at.channelId)
      .first());
  if (removed) {
    // What was still to be posted here of this project goes with it (recorded where the project lives).
    await (
      await homeD1(env, project.id)
    )
      .prepare("DELETE FROM outbox WHERE target_kind = 'slack' AND status = 'pending' AND target_id = ?1 AND project_id = ?2")
      .bind(`${at.teamId}:${at.channelId}`, project.id)
      .run();
    return said(`This channel no longer posts *${named(project.name)}*.`);
  }
  await env.DB.prepare(
    `INSERT INTO slack_channels (id, project_id, team_id, channel_id, events, muted, created_by, created_at) VALUES (?1, ?2, ?3, ?4, NULL, 0, ?5, ?6)
     ON CONFLICT DO NOTHING`,
  )
    .bind(crypto.randomUUID(), project.id, at.teamId, at.channelId, user.id, new Date().toISOString())
    .run();
  return said(
    `This channel now posts *${named(project.name)}*: questions, plans, tasks to approve, failures and more, with buttons. ` +
      "Invite the app to the channel if it is not in it. `/orc watch` again to stop.",
  );
}

async function mute(env: WorkerEnv, at: OrcContext, user: UserRow) {
  const rows = await channelProjects(env, at);
  if (rows.length === 0) return said("This channel posts no project: `/orc watch &lt;project&gt;` first.");
  const mine: typeof rows = [];
  for (const r of rows) if ((await accessTo(env, user, r.project_id)) === "write") mine.push(r);
  if (mine.length === 0) return said("Viewers can only read the projects this channel posts: ask one of their members.");
  const muted = mine.some((r) => !r.muted) ? 1 : 0;
  await env.DB.prepare("UPDATE slack_channels SET muted = ?1 WHERE id IN (SELECT value FROM json_each(?2))")
    .bind(muted, JSON.stringify(mine.map((r) => r.id)))
    .run();
  const names = (
    await env.DB.prepare("SELECT name FROM projects WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY name")
      .bind(JSON.stringify(mine.map((r) => r.project_id)))
      .all<{ name: string }>()
  ).results.map((p) => p.name);
  return said(
    muted ? `Muted: this channel posts nothing of ${projectNames(names)} until \`/orc mute\` again.` : `This channel posts ${projectNames(names)} again.`,
  );
}

async function run(env: WorkerEnv, user: UserRow, text: string) {
  const asked = parseRunCommand(text, RUN_USAGE);
  if ("error" in asked) return said(escapeMrkdwn(asked.error));
  const found = await templateNamed(env, await visibleProjects(env, user), asked, "/orc run");
  if ("error" in found) return said(escapeMrkdwn(found.error));
  const { template, project } = found;
  const command = { op: "instantiate", templateId: template.id, parameters: asked.parameters, fromText: true, run: { source: "slack" } } as const;
  const done = await actAs(env, user, project.id, command, "");
  if (!done.ok) return said(`Not started: ${escapeMrkdwn(done.text)}`);
  // Tasks with requirements are offered to servers at once, as the API's instantiate does.
  if (template.tasks.some((t) => t.requirements)) await executeInRoom(env, project.id, HUB_ACTOR, { op: "sweep" }).catch(() => undefined);
  return said(`Started *${named(template.name)}* in ${named(project.name)}: ${template.tasks.length} task(s). \`/orc tasks\` lists them.`);
}
