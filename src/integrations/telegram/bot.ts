/**
 * The Telegram bot (grammY): linking a chat with `/start <code>`, the
 * commands, the buttons on notifications and replies to them. Everything a
 * chat does acts as the person linked to it (people.ts).
 */
import { Bot, type Context } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { sha256Hex } from "../../auth/secrets";
import { cutText } from "../../domain/text";
import type { UserRow } from "../../db/client";
import type { WorkerEnv } from "../../runtime/worker-env";
import { apiRootOf } from "./api-root";
import { logError } from "../../runtime/log";
import { answerText, changesPrompt, escapeHtml, openTaskList, parseButton, replyTarget } from "./messages";
import { APPROVED, optionLabels, REJECTED } from "../../domain/question-options";
import { openTasksOf } from "../chat/open-tasks";
import { accessTo, actAs, findVisible, TASK_BUTTON_COMMANDS, visibleProjects } from "../people";
import { forgetLinks } from "./people";
import { executeInRoom, HUB_ACTOR } from "../../runtime/room-rpc";
import { parseRunCommand } from "../chat/run-command";
import { templateNamed } from "../chat/templates";
import { rowById } from "../chat/shard-rows";
import { homeD1 } from "../../db/shards";

const HELP = [
  "<b>Orchestratia</b>: questions, tasks and plans to approve, failures and finished tasks from your projects, answered here.",
  "",
  "/projects: your projects, and which you watch",
  "/tasks: open tasks of the projects you watch, those that need you first",
  "/task &lt;id prefix&gt;: one task",
  "/run &lt;template&gt; [name=value …]: start a template's graph (quote names with spaces; project/template when several have it)",
  "/watch &lt;project&gt;: watch a project again, or stop watching it",
  "/denied &lt;project&gt;: hear of the project's denied tool calls, or stop; /denied alone lists where you do",
  "/mute: stop (or start again) all notifications",
  "/unlink: unlink this chat",
  "",
  "Answer a question by its buttons or by replying to it.",
].join("\n");

interface Link {
  id: string;
  muted: number;
  unwatched: string;
  deniedProjects: string;
}

export function botFor(env: WorkerEnv, botInfo: UserFromGetMe) {
  const bot = new Bot(env.TELEGRAM_BOT_TOKEN!, { botInfo, client: { apiRoot: apiRootOf(env) } });
  const html = { parse_mode: "HTML" as const };
  // A linked chat acts as its person: only a person's own chat with the bot may be linked or act (not a group's members).
  bot.use(async (ctx, next) => {
    if (ctx.chat?.type === "private") return next();
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: "Only a private chat with the bot can act" });
  });
  // A failing handler is logged and the update still answered 200, so Telegram does not send it again.
  bot.catch((err) => logError("telegram update failed", { operation: "telegram_update", update_id: err.ctx.update.update_id }, err.error));
  const answer = (ctx: Context, text: string, alert = false) => ctx.answerCallbackQuery({ text: answerText(text), show_alert: alert });

  /** The person this chat is linked to, with the link; none while the person's account is deactivated (nothing acts as them). */
  const linked = async (ctx: Context): Promise<{ user: UserRow; link: Link } | null> => {
    const row = await env.DB.prepare(
      `SELECT l.id AS link_id, l.muted, l.unwatched, l.denied_projects, u.* FROM telegram_links l JOIN users u ON u.id = l.user_id
       WHERE l.chat_id = ?1 AND u.deactivated_at IS NULL`,
    )
      .bind(String(ctx.chat?.id))
      .first<Record<string, unknown>>();
    if (!row) return null;
    const user: UserRow = {
      id: row.id as string,
      email: row.email as string,
      name: row.name as string | null,
      role: row.role as UserRow["role"],
      passwordHash: null,
      deactivatedAt: (row.deactivated_at as string | null) ?? null,
      inboxSeenAt: (row.inbox_seen_at as string | null) ?? null,
      createdAt: row.created_at as string,
      updatedAt: row.updated_at as string,
    };
    return {
      user,
      link: {
        id: row.link_id as string,
        muted: row.muted as number,
        unwatched: row.unwatched as string,
        deniedProjects: row.denied_projects as string,
      },
    };
  };
  const notLinked = (ctx: Context) =>
    ctx.reply("This chat is not linked to an active Orchestratia account. Open the hub, choose “Link Telegram” and follow the link.");

  bot.command("start", async (ctx) => {
    const code = ctx.match.trim();
    if (!code) return (await linked(ctx)) ? ctx.reply(HELP, html) : notLinked(ctx);
    const found = await env.DB.prepare("DELETE FROM telegram_link_codes WHERE code_hash = ?1 RETURNING user_id, expires_at")
      .bind(await sha256Hex(code))
      .first<{ user_id: string; expires_at: string }>();
    if (!found || Date.parse(found.expires_at) < Date.now()) return ctx.reply("That link has expired or was used already: ask the hub for a new one.");
    const chatId = String(ctx.chat.id);
    // A person has one chat and a chat one person: linking again moves the link.
    await env.DB.batch([
      ...forgetLinks(env, "chat_id = ?1 OR user_id = ?2", chatId, found.user_id),
      env.DB.prepare("INSERT INTO telegram_links (id, user_id, chat_id, muted, unwatched, created_at) VALUES (?1, ?2, ?3, 0, '[]', ?4)").bind(
        crypto.randomUUID(),
        found.user_id,
        chatId,
        new Date().toISOString(),
      ),
    ]);
    const user = await env.DB.prepare("SELECT email FROM users WHERE id = ?1").bind(found.user_id).first<{ email: string }>();
    await ctx.reply(`Linked to <b>${escapeHtml(user?.email ?? "your account")}</b>.\n\n${HELP}`, html);
  });

  bot.command("help", (ctx) => ctx.reply(HELP, html));

  bot.command("unlink", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    await env.DB.batch(forgetLinks(env, "id = ?1", me.link.id));
    await ctx.reply("Unlinked: this chat hears nothing more.");
  });

  bot.command("mute", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const muted = me.link.muted ? 0 : 1;
    await env.DB.prepare("UPDATE telegram_links SET muted = ?2 WHERE id = ?1").bind(me.link.id, muted).run();
    await ctx.reply(muted ? "Muted: nothing is sent until you /mute again." : "Notifications are on again.");
  });

  bot.command("projects", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const unwatched: string[] = JSON.parse(me.link.unwatched);
    const projects = await visibleProjects(env, me.user);
    if (projects.length === 0) return ctx.reply("You are in no project yet.");
    await ctx.reply(
      projects.map((p) => `${unwatched.includes(p.id) ? "○" : "●"} <b>${escapeHtml(p.name)}</b> (${escapeHtml(p.slug)})`).join("\n") +
        "\n\n● watched · /watch &lt;project&gt; to change",
      html,
    );
  });

  /** The person's project named (by slug, name, or the start of its name) in a command. */
  const projectNamed = async (user: UserRow, match: string) => {
    const wanted = match.trim().toLowerCase();
    const projects = await visibleProjects(env, user);
    return (
      projects.find((p) => p.slug.toLowerCase() === wanted || p.name.toLowerCase() === wanted) ??
      projects.find((p) => wanted && p.name.toLowerCase().startsWith(wanted))
    );
  };

  bot.command("watch", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const project = await projectNamed(me.user, ctx.match);
    if (!project) return ctx.reply("Which project? /watch &lt;project name or slug&gt; (see /projects)", html);
    const unwatched: string[] = JSON.parse(me.link.unwatched);
    const watching = unwatched.includes(project.id);
    const next = watching ? unwatched.filter((id) => id !== project.id) : [...unwatched, project.id];
    await env.DB.prepare("UPDATE telegram_links SET unwatched = ?2 WHERE id = ?1").bind(me.link.id, JSON.stringify(next)).run();
    await ctx.reply(watching ? `Watching <b>${escapeHtml(project.name)}</b> again.` : `No longer watching <b>${escapeHtml(project.name)}</b>.`, html);
  });

  bot.command("denied", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const denied: string[] = JSON.parse(me.link.deniedProjects);
    if (!ctx.match.trim()) {
      const hearing = (await visibleProjects(env, me.user)).filter((p) => denied.includes(p.id));
      return ctx.reply(
        hearing.length === 0
          ? "You hear of denied tool calls in no project: /denied &lt;project&gt; to start."
          : `You hear of denied tool calls in:\n${hearing.map((p) => `• <b>${escapeHtml(p.name)}</b> (${escapeHtml(p.slug)})`).join("\n")}\n\n/denied &lt;project&gt; to stop`,
        html,
      );
    }
    const project = await projectNamed(me.user, ctx.match);
    if (!project) return ctx.reply("Which project? /denied &lt;project name or slug&gt; (see /projects)", html);
    const hearing = denied.includes(project.id);
    const next = hearing ? denied.filter((id) => id !== project.id) : [...denied, project.id];
    await env.DB.prepare("UPDATE telegram_links SET denied_projects = ?2 WHERE id = ?1").bind(me.link.id, JSON.stringify(next)).run();
    await ctx.reply(
      hearing
        ? `No longer telling you of denied tool calls in <b>${escapeHtml(project.name)}</b>.`
        : `You will hear of denied tool calls in <b>${escapeHtml(project.name)}</b>, one message per batch the daemon posts.`,
      html,
    );
  });

  bot.command("tasks", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const unwatched: string[] = JSON.parse(me.link.unwatched);
    const watched = (await visibleProjects(env, me.user)).filter((p) => !unwatched.includes(p.id));
    if (watched.length === 0) return ctx.reply("You watch no project: /projects lists yours, /watch &lt;project&gt; watches one.", html);
    const { tasks, total } = await openTasksOf(
      env,
      watched.map((p) => p.id),
    );
    await ctx.reply(openTaskList(tasks, total), html);
  });

  bot.command("task", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const found = await findVisible(env, me.user, "tasks", ctx.match.trim().toLowerCase());
    if (!found) return ctx.reply("No task of yours starts with that: /task &lt;id prefix&gt;", html);
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
    if (!t) return ctx.reply("That task is gone.");
    const result = t.result ? (JSON.parse(t.result) as Record<string, unknown>) : null;
    const outcome = typeof result?.summary === "string" ? result.summary : typeof result?.error === "string" ? result.error : null;
    await ctx.reply(
      [
        `<b>${escapeHtml(t.title)}</b>`,
        `${escapeHtml(t.project)} · ${t.status} · ${t.priority}${t.server ? ` · on ${escapeHtml(t.server)}` : ""}`,
        `<code>${t.id}</code>`,
        ...(outcome ? ["", escapeHtml(cutText(outcome, 1500, "…"))] : []),
      ].join("\n"),
      html,
    );
  });

  bot.command("run", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const asked = parseRunCommand(ctx.match);
    if ("error" in asked) return ctx.reply(escapeHtml(asked.error), html);
    const found = await templateNamed(env, await visibleProjects(env, me.user), asked);
    if ("error" in found) return ctx.reply(escapeHtml(found.error), html);
    const { template, project } = found;
    const command = { op: "instantiate", templateId: template.id, parameters: asked.parameters, fromText: true, run: { source: "telegram" } } as const;
    const done = await actAs(env, me.user, project.id, command, "");
    if (!done.ok) return ctx.reply(`Not started: ${escapeHtml(done.text)}`, html);
    // Tasks with requirements are offered to servers at once, as the API's instantiate does.
    if (template.tasks.some((t) => t.requirements)) await executeInRoom(env, project.id, HUB_ACTOR, { op: "sweep" }).catch(() => undefined);
    await ctx.reply(`Started <b>${escapeHtml(template.name)}</b> in ${escapeHtml(project.name)}: ${template.tasks.length} task(s).\n/tasks lists them.`, html);
  });

  bot.on("callback_query:data", async (ctx) => {
    const me = await linked(ctx);
    if (!me) return ctx.answerCallbackQuery({ text: "This chat is not linked to an active account", show_alert: true });
    const action = parseButton(ctx.callbackQuery.data);
    if (!action || action.kind === "answer_text") return ctx.answerCallbackQuery({ text: "This button no longer does anything" });
    if (action.kind === "answer") {
      const iv = await rowById<{ id: string; project_id: string; options: string | null }>(
        env,
        "SELECT id, project_id, options FROM interventions WHERE id = ?1",
        action.interventionId,
      );
      if (!iv || (await accessTo(env, me.user, iv.project_id)) === "none") return ctx.answerCallbackQuery({ text: "Not found", show_alert: true });
      const response =
        action.choice === "y" ? APPROVED : action.choice === "n" ? REJECTED : optionLabels(iv.options ? JSON.parse(iv.options) : null)[action.choice];
      if (response === undefined) return ctx.answerCallbackQuery({ text: "That option is gone", show_alert: true });
      const done = await actAs(env, me.user, iv.project_id, { op: "respond", interventionId: iv.id, response }, `Answered: ${response}`);
      return answer(ctx, done.text, !done.ok);
    }
    const task = await rowById<{ id: string; project_id: string; title: string }>(env, "SELECT id, project_id, title FROM tasks WHERE id = ?1", action.taskId);
    if (!task || (await accessTo(env, me.user, task.project_id)) === "none") return ctx.answerCallbackQuery({ text: "Not found", show_alert: true });
    if (action.kind === "revise_plan") {
      if ((await accessTo(env, me.user, task.project_id)) !== "write")
        return ctx.answerCallbackQuery({ text: "Viewers can only read this project", show_alert: true });
      await ctx.answerCallbackQuery();
      return ctx.reply(changesPrompt(task.id, task.title), { ...html, reply_markup: { force_reply: true, input_field_placeholder: "What should change?" } });
    }
    const { command, done: said } = TASK_BUTTON_COMMANDS[action.kind](task.id);
    const done = await actAs(env, me.user, task.project_id, command, said);
    return answer(ctx, done.text, !done.ok);
  });

  // A reply to a question answers it; a reply to a plan's prompt asks for those changes.
  bot.on("message:text", async (ctx) => {
    const target = replyTarget(ctx.message.reply_to_message?.text);
    if (!target) return ctx.reply(HELP, html);
    const me = await linked(ctx);
    if (!me) return notLinked(ctx);
    const text = ctx.message.text.trim();
    if (target.kind === "question") {
      const iv = await findVisible(env, me.user, "interventions", target.prefix);
      if (!iv) return ctx.reply("That question is not yours to answer.");
      const done = await actAs(env, me.user, iv.projectId, { op: "respond", interventionId: iv.id, response: text }, "Answer sent.");
      return ctx.reply(done.text, { reply_parameters: { message_id: ctx.message.message_id } });
    }
    const task = await findVisible(env, me.user, "tasks", target.prefix);
    if (!task) return ctx.reply("That plan is not yours to review.");
    const done = await actAs(env, me.user, task.projectId, { op: "revise_plan", taskId: task.id, feedback: text }, "Changes asked for.");
    return ctx.reply(done.text, { reply_parameters: { message_id: ctx.message.message_id } });
  });

  return bot;
}
