/**
 * What a person does back in chat for a project off the directory: its questions, tasks and templates live on DB_1,
 * so a reply, a button or a command finds them there (by id on every shard when only the id is known) and the room
 * on DB_1 does what was asked. Telegram and Slack are faked at the network edge (test/bot-api-setup.ts,
 * test/slack-api-setup.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { hookTime, postPermissionLog, type HookLogEntry } from "./fake-daemon";
import { bootstrapAdmin, call, createUser, until as waitUntil } from "./helpers";
import { count, d1 } from "./move-world";
import { refuseChannel } from "./slack";
import { click, installTeam, linkSlack, orc, submit, type SlackUser } from "./slack-people";
import { unique } from "./slack-lane";
import { botCalls, sentTo, telegramUpdates } from "./telegram-updates";
import { ask, projectOn, running } from "./shard-chat-world";
import { cli, expectOk, T, type World } from "./task-world";

const ANN = 7401;
const TEAM = "TSHARDANSWERS";
const ann: SlackUser = { team: TEAM, user: "UANN", channel: "CANSWERS" };

const until = <V>(read: () => Promise<V>, done: (value: V) => boolean, what: string) => waitUntil(read, done, what, 10_000);
const lastCallbackAnswer = async () => (await botCalls()).filter((c) => c.method === "answerCallbackQuery").at(-1)?.body;
const { message, press } = telegramUpdates({ updateId: 95_000, messageId: 9_000 });

/** Sends a chat's message and waits for the bot's next message to the chat. */
async function answerTo(chatId: number, text: string, replyTo?: string) {
  const before = (await sentTo(chatId)).length;
  expect((await message(chatId, text, replyTo)).status).toBe(200);
  return (
    await until(
      () => sentTo(chatId),
      (m) => m.length > before,
      `the answer to ${text}`,
    )
  ).at(-1)!.body.text as string;
}

let admin: string;
let member: Awaited<ReturnType<typeof createUser>>;

/** A project on `shard` (DB_1 unless said) with its agents' sessions; the member in it. */
const projectOnShard = (name: string, shard = "DB_1") => projectOn(admin, member, name, shard);

/** The question's row where it lives (DB_1), and whether the directory has one. */
const questionOn = (shard: string, ivId: string) =>
  d1(shard).prepare("SELECT status, response, responded_by FROM interventions WHERE id = ?1").bind(ivId).first<Record<string, string>>();
const taskStatus = async (taskId: string) =>
  (await d1("DB_1").prepare("SELECT status FROM tasks WHERE id = ?1").bind(taskId).first<{ status: string }>())?.status;

let w: World;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  member = await createUser(admin, "member");
  expect((await call("/api/v1/telegram/setup", { method: "POST", token: admin })).status).toBe(200);
  const { json } = await expectOk(call("/api/v1/auth/me/telegram-link", { method: "POST", token: member.token }), 201);
  expect(await answerTo(ANN, `/start ${json.code}`)).toContain("Linked to");
  await installTeam(TEAM);
  await linkSlack(member.token, ann);
  w = await projectOnShard("Answered on DB_1");
});

describe("Telegram, for a project on DB_1", () => {
  it("takes a reply to a question as its answer, and the task runs again", async () => {
    const taskId = await running(w, "Needs a region");
    const ivId = await ask(w, taskId, "Which region?");
    const asked = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Question #${ivId.slice(0, 8)}`)),
      "the question",
    );
    const question = asked.find((c) => c.body.text.includes(`Question #${ivId.slice(0, 8)}`))!.body.text as string;
    expect(await answerTo(ANN, "eu-west, please", question)).toBe("Answer sent.");
    expect(await questionOn("DB_1", ivId)).toEqual({ status: "responded", response: "eu-west, please", responded_by: member.email });
    expect(await questionOn("DB", ivId)).toBeNull();
    expect(await taskStatus(taskId)).toBe("running");
  });

  it("takes an approval by its button, and the task runs again", async () => {
    const taskId = await running(w, "Deploy gate");
    const ivId = await ask(w, taskId, "Deploy now?", "approval");
    expect((await press(ANN, `iv:${ivId}:y`)).status).toBe(200);
    expect(await lastCallbackAnswer()).toMatchObject({ text: "Answered: approved" });
    expect(await questionOn("DB_1", ivId)).toEqual({ status: "responded", response: "approved", responded_by: member.email });
    expect(await taskStatus(taskId)).toBe("running");
  });

  it("retries a failed task by its button", async () => {
    const taskId = await running(w, "Fails once");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/fail`, { error: "disk full" }));
    expect(await taskStatus(taskId)).toBe("failed");
    await press(ANN, `rt:${taskId}`);
    expect(await lastCallbackAnswer()).toMatchObject({ text: "Retried" });
    expect(await taskStatus(taskId)).not.toBe("failed");
  });

  it("shows a task by /task", async () => {
    const taskId = await running(w, "Shown <here>");
    const shown = await answerTo(ANN, `/task ${taskId.slice(0, 8)}`);
    expect(shown).toContain("<b>Shown &lt;here&gt;</b>");
    expect(shown).toContain("Answered on DB_1 · running");
    expect(shown).toContain(`on ${w.worker.name}`);
  });

  it("lists by /tasks the open tasks of projects on both shards, those waiting on a person first", async () => {
    const onDirectory = await projectOnShard("Answered on DB", "DB");
    await running(onDirectory, "At work on DB");
    const waiting = await running(w, "Waits on DB_1");
    await ask(w, waiting, "Which one?");
    const listed = await answerTo(ANN, "/tasks");
    expect(listed).toContain("At work on DB");
    expect(listed.indexOf("Waits on DB_1")).toBeGreaterThan(-1);
    expect(listed.indexOf("Waits on DB_1")).toBeLessThan(listed.indexOf("At work on DB"));
  });

  it("starts a template's graph by /run", async () => {
    const name = `Triage ${unique()}`;
    await expectOk(
      call(`/api/v1/projects/${w.project.id}/templates`, { token: member.token, body: { name, tasks: [{ key: "t", title: "Triaged from chat" }] } }),
      201,
    );
    expect(await answerTo(ANN, `/run "${name}"`)).toContain(`Started <b>${name}</b> in Answered on DB_1: 1 task(s)`);
    expect(await count("DB_1", "SELECT count(*) AS n FROM tasks WHERE project_id = ?1 AND title = 'Triaged from chat'", w.project.id)).toBe(1);
  });

  it("tells of denied tool calls from the shard, naming their session and task", async () => {
    expect(await answerTo(ANN, "/denied Answered on DB_1")).toContain("You will hear of denied tool calls");
    // Rules live in the directory, whichever shard the project is on.
    const { json: rule } = await expectOk(
      call("/api/v1/approval-rules", {
        token: admin,
        body: { name: "No <fetching>", tool_pattern: "WebFetch", action: "deny", scope_type: "project", scope_id: w.project.id },
      }),
      201,
    );
    await running(w, "Fetches things");
    const entry: HookLogEntry = {
      session_id: w.workerSession,
      project_id: w.project.id,
      tool_name: "WebFetch",
      tool_input: { url: "https://example.com/denied" },
      decision: "denied",
      matched_rule_id: rule.id,
      reason: null,
      agent_name: "claude",
      created_at: hookTime(Date.now() - 1000),
    };
    expect((await postPermissionLog(w.worker.apiKey, [entry])).status).toBe(201);
    const sent = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => /tool calls? denied/.test(c.body.text)),
      "the denied call told",
    );
    const text = sent.find((c) => /tool calls? denied/.test(c.body.text))!.body.text as string;
    expect(text).toContain("https://example.com/denied");
    expect(text).toContain("session worker");
    expect(text).toContain("Fetches things");
    expect(text).toContain("rule No &lt;fetching&gt;");
    const notices = "SELECT count(*) AS n FROM outbox WHERE target_kind = 'telegram' AND event_type = 'permissions_denied' AND project_id = ?1";
    expect(await count("DB_1", notices, w.project.id)).toBe(1);
    expect(await count("DB", notices, w.project.id)).toBe(0);
  });
});

describe("Slack, for a project on DB_1", () => {
  it("answers an approval by its button, and the task runs again", async () => {
    const taskId = await running(w, "Slack gate");
    const ivId = await ask(w, taskId, "Ship it?", "approval");
    const { res } = await click(ann, `iv:${ivId}:y`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(await questionOn("DB_1", ivId)).toEqual({ status: "responded", response: "approved", responded_by: member.email });
    expect(await taskStatus(taskId)).toBe("running");
  });

  it("answers a question in its form", async () => {
    const taskId = await running(w, "Slack question");
    const ivId = await ask(w, taskId, "Which port?");
    const res = await submit(ann, `answer:${ivId}`, "8080");
    expect(res.status).toBe(200);
    expect(await questionOn("DB_1", ivId)).toEqual({ status: "responded", response: "8080", responded_by: member.email });
    expect(await taskStatus(taskId)).toBe("running");
  });

  it("shows a task by /orc task", async () => {
    const taskId = await running(w, "Shown in Slack");
    const { said } = await orc(ann, `task ${taskId.slice(0, 8)}`);
    expect(said).toContain("Shown in Slack");
    expect(said).toContain("Answered on DB_1");
    expect(said).toContain(`/projects/${w.project.id}/tasks/${taskId}`);
  });

  it("lists a task by /orc tasks", async () => {
    await running(w, "Listed in Slack");
    expect((await orc(ann, "tasks")).said).toContain("Listed in Slack");
  });

  it("stops a channel posting the project by /orc watch, and drops what it was still owed on the shard", async () => {
    const here = { ...ann, channel: "CWATCHES" };
    expect((await orc(here, `watch ${w.project.name}`)).said).toContain("This channel now posts");
    // Slack refuses the channel's posts for now: the question's row waits on DB_1.
    await refuseChannel(here.channel, { times: 20, status: 500, error: "internal_error" });
    const taskId = await running(w, "Owed to a channel");
    await ask(w, taskId, "Still owed?");
    const pending = "SELECT count(*) AS n FROM outbox WHERE target_kind = 'slack' AND target_id = ?1 AND status = 'pending'";
    await until(
      () => count("DB_1", pending, `${TEAM}:${here.channel}`),
      (n) => n > 0,
      "a post owed to the channel",
    );
    expect((await orc(here, `watch ${w.project.name}`)).said).toContain("no longer posts");
    expect(await count("DB_1", pending, `${TEAM}:${here.channel}`)).toBe(0);
  });

  it("drops what a channel removed on the project's page was still owed on the shard", async () => {
    const channel = "CREMOVED";
    const added = await expectOk(
      call(`/api/v1/projects/${w.project.id}/slack-channels`, { token: member.token, body: { channel_id: channel, team_id: TEAM } }),
      201,
    );
    await refuseChannel(channel, { times: 20, status: 500, error: "internal_error" });
    const taskId = await running(w, "Owed to a removed channel");
    await ask(w, taskId, "Still owed?");
    const pending = "SELECT count(*) AS n FROM outbox WHERE target_kind = 'slack' AND target_id = ?1 AND status = 'pending'";
    await until(
      () => count("DB_1", pending, `${TEAM}:${channel}`),
      (n) => n > 0,
      "a post owed to the channel",
    );
    const removed = await call(`/api/v1/projects/${w.project.id}/slack-channels/${added.json.id}`, { token: member.token, method: "DELETE" });
    expect(removed.status).toBe(204);
    expect(await count("DB_1", pending, `${TEAM}:${channel}`)).toBe(0);
    expect(await count("DB", "SELECT count(*) AS n FROM slack_channels WHERE id = ?1", added.json.id)).toBe(0);
  });
});
