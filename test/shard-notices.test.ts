/**
 * Telegram's and Slack's notices of a project off the directory: the room on DB_1 records them on its shard, for the
 * people and channels the directory names, and that shard's lanes deliver them once, retrying what Telegram or Slack
 * refused, against the fake APIs at the network edge (test/bot-api-setup.ts, test/slack-api-setup.ts). A project moved
 * to DB_1 is followed there, its Slack threads with it.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { wakeStrandedDeliveries } from "../src/cron/maintenance";
import type { DueRow } from "../src/integrations/outbox-lane";
import { bootstrapAdmin, call, createUser, until as waitUntil } from "./helpers";
import { askMove, count, d1, driveToEnd, moves, placement } from "./move-world";
import { refuseChannel } from "./slack";
import { actionIds, blockText, buttonsOf, callsIn, install, posted, postTo, unique } from "./slack-lane";
import { ask, projectOn, running } from "./shard-chat-world";
import { cli, expectOk, T } from "./task-world";

const BOT_API = `http://127.0.0.1:${env.TELEGRAM_API_ROOT.split(":").at(-1)}`;
const SECRET = { "X-Telegram-Bot-Api-Secret-Token": "test-telegram-webhook-secret" };
const ANN = 7301;
const BOSS = 7302;

const until = <V>(read: () => Promise<V>, done: (value: V) => boolean, what: string) => waitUntil(read, done, what, 10_000);
const sentTo = async (chatId: number) =>
  ((await (await fetch(`${BOT_API}/control/calls`)).json()) as { method: string; body: Record<string, any>; refused?: string }[]).filter(
    (c) => c.method === "sendMessage" && Number(c.body.chat_id) === chatId,
  );
const refuse = (chatId: number, refusal: Record<string, unknown>) =>
  fetch(`${BOT_API}/control/refuse`, { method: "POST", body: JSON.stringify({ chat_id: chatId, ...refusal }) });

let updateId = 90_000;
/** Links a chat as a person does: a code from the hub, then `/start <code>` in the chat. */
async function link(token: string, chatId: number) {
  const { json } = await expectOk(call("/api/v1/auth/me/telegram-link", { method: "POST", token }), 201);
  const text = `/start ${json.code}`;
  const message = { message_id: updateId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: "private" }, text };
  const from = { id: chatId, is_bot: false, first_name: "Ann" };
  const sent = await call("/telegram/webhook", {
    body: { update_id: updateId++, message: { ...message, from, entities: [{ type: "bot_command", offset: 0, length: 6 }] } },
    headers: SECRET,
  });
  expect(sent.status).toBe(200);
  await until(
    () => sentTo(chatId),
    (m) => m.some((c) => c.body.text.startsWith("Linked to")),
    "the link confirmed",
  );
}

let admin: string;
let member: Awaited<ReturnType<typeof createUser>>;

/** A project on `shard` (DB_1 unless said) with its agents' sessions; the member in it. */
const placed = (name: string, shard = "DB_1") => projectOn(admin, member, name, shard);

/** Outbox rows of a kind about a task's events of a type, on a shard. */
const owedOn = (shard: string, kind: string, taskId: string, type: string) =>
  count(
    shard,
    `SELECT count(*) AS n FROM outbox o JOIN events e ON e.project_id = o.project_id AND e.seq = o.seq
     WHERE o.target_kind = ?1 AND e.task_id = ?2 AND e.type = ?3 AND o.status = 'delivered'`,
    kind,
    taskId,
    type,
  );

/** Every lane owed something is woken again (the hourly sweep, on each shard), and what they would send has time to go. */
async function wakeEverything() {
  await wakeStrandedDeliveries(env, Date.now());
  await wakeStrandedDeliveries({ ...env, DB: env.DB_1! }, Date.now(), "DB_1");
  await new Promise((r) => setTimeout(r, 1500));
}

beforeAll(async () => {
  admin = await bootstrapAdmin();
  moves.admin = admin;
  member = await createUser(admin, "member");
  expect((await call("/api/v1/telegram/setup", { method: "POST", token: admin })).status).toBe(200);
  await link(member.token, ANN);
  await link(admin, BOSS);
});

describe("Telegram, for a project on DB_1", () => {
  it("tells the linked person of a question once, recorded and delivered on the shard", async () => {
    const w = await placed("Telegram on DB_1");
    const taskId = await running(w, "Needs <input>");
    const ivId = await ask(w, taskId, "Which region?");
    const said = `Question #${ivId.slice(0, 8)}`;
    const sent = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(said)),
      "the question",
    );
    // Its task's title and project's name were read where they live.
    expect(sent.find((c) => c.body.text.includes(said))!.body.text).toContain("Needs &lt;input&gt;");
    expect(sent.find((c) => c.body.text.includes(said))!.body.text).toContain("Telegram on DB_1");
    expect(await owedOn("DB_1", "telegram", taskId, "intervention_requested")).toBe(2);
    expect(await owedOn("DB", "telegram", taskId, "intervention_requested")).toBe(0);

    await wakeEverything();
    expect((await sentTo(ANN)).filter((c) => c.body.text.includes(said))).toHaveLength(1);
    // The admin sees every project, so hears of it too, once.
    expect((await sentTo(BOSS)).filter((c) => c.body.text.includes(said))).toHaveLength(1);
  });

  it("tells a finished task to its creator only, and tries a refused failure again", async () => {
    const w = await placed("Telegram endings");
    const done = await running(w, "Finished on the shard");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${done}/complete`, { result: { summary: "ok" } }));
    await until(
      () => sentTo(BOSS),
      (m) => m.some((c) => c.body.text.includes("Finished on the shard")),
      "the finished task, to its creator",
    );
    expect(await owedOn("DB_1", "telegram", done, "task_completed")).toBe(1);

    await refuse(ANN, { times: 1, error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 });
    const failed = await running(w, "Fails on the shard");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${failed}/fail`, { error: "disk full" }));
    const sent = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes("Fails on the shard") && !c.refused),
      "the failure, sent again",
    );
    expect(sent.filter((c) => c.body.text.includes("Fails on the shard")).length).toBe(1);
    // Its row on the shard took two attempts (recorded once the second was made).
    const attempts = () =>
      count(
        "DB_1",
        `SELECT max(o.attempts) AS n FROM outbox o JOIN events e ON e.project_id = o.project_id AND e.seq = o.seq JOIN delivery_attempts a ON a.outbox_id = o.id
         WHERE o.target_kind = 'telegram' AND e.task_id = ?1 AND e.type = 'task_failed' AND o.status = 'delivered' AND a.status_code = 429`,
        failed,
      );
    expect(await until(attempts, (n) => n > 0, "the failure's row delivered")).toBe(2);
    await wakeEverything();
    expect((await sentTo(ANN)).filter((c) => c.body.text.includes("Finished on the shard"))).toHaveLength(0);
    expect((await sentTo(BOSS)).filter((c) => c.body.text.includes("Finished on the shard"))).toHaveLength(1);
  });
});

/** The channel's post of a subject, on the shard where the project's rows live. */
const postOn = (shard: string, team: string, channel: string, subject: string) =>
  d1(shard)
    .prepare("SELECT ts, thread_ts FROM slack_posts WHERE team_id = ?1 AND channel_id = ?2 AND subject = ?3")
    .bind(team, channel, subject)
    .first<{ ts: string; thread_ts: string | null }>();

describe("Slack, for a project on DB_1", () => {
  it("posts to the channel the project posts to once, and updates the message in place when it is answered", async () => {
    const w = await placed("Slack on DB_1");
    const team = await install();
    // Written in the directory, where the project's channel routes and `/orc watch` write it.
    const channel = await postTo(w, team);
    await refuseChannel(channel, { times: 1, status: 500, error: "internal_error" });
    const taskId = await running(w, "Deploy <prod>");
    const ivId = await ask(w, taskId, "Ship it?", "approval");
    const sent = await until(
      () => posted(channel),
      (c) => c.some((m) => actionIds(m).includes(`iv:${ivId}:y`) && !m.refused),
      "the approval, sent again after Slack's failure",
    );
    expect(sent.filter((m) => m.refused)).toHaveLength(1);
    expect(blockText(sent.at(-1)!)).toContain("Deploy &lt;prod&gt;");
    const post = await until(
      () => postOn("DB_1", team, channel, `iv:${ivId}`),
      (p) => p !== null,
      "the post recorded on the shard",
    );
    expect(await postOn("DB", team, channel, `iv:${ivId}`)).toBeNull();

    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: member.token, body: { response: "approved" } }));
    const updates = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the message settled",
    );
    expect(updates[0]!.params.ts).toBe(post!.ts);
    expect(buttonsOf(updates[0]!)).toEqual([]);
    expect(await owedOn("DB_1", "slack", taskId, "intervention_requested")).toBe(1);
    expect(await count("DB", "SELECT count(*) AS n FROM outbox WHERE target_kind = 'slack' AND target_id = ?1", `${team}:${channel}`)).toBe(0);

    await wakeEverything();
    expect((await posted(channel)).filter((m) => !m.refused)).toHaveLength(1);
    expect(await callsIn(channel, "chat.update")).toHaveLength(1);
  });
});

describe("a project moved from DB to DB_1", () => {
  it("is followed by its notices, and its Slack thread goes on", async () => {
    const w = await placed("Moves with its notices", "DB");
    const team = await install();
    const channel = await postTo(w, team);
    const taskId = await running(w, "Before and after");
    const first = await ask(w, taskId, "Before the move?");
    const root = await until(
      () => postOn("DB", team, channel, `task:${taskId}`),
      (p) => p !== null,
      "the task's first post",
    );
    await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Question #${first.slice(0, 8)}`)),
      "the question before the move",
    );

    await expectOk(askMove(w.project.id, "DB_1"), 202);
    await driveToEnd(w.project.id);
    expect(await placement(w.project.id)).toMatchObject({ shard: "DB_1", moving_to: null });
    // Its posts went with it; the channel stayed in the directory.
    expect(await postOn("DB_1", team, channel, `task:${taskId}`)).toEqual(root);
    expect(await count("DB", "SELECT count(*) AS n FROM slack_channels WHERE project_id = ?1", w.project.id)).toBe(1);

    const second = await ask(w, taskId, "After the move?");
    await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Question #${second.slice(0, 8)}`)),
      "the question after the move",
    );
    const after = await until(
      () => posted(channel),
      (c) => c.some((m) => blockText(m).includes("After the move?")),
      "the question after the move, in Slack",
    );
    expect(after.find((m) => blockText(m).includes("After the move?"))!.params.thread_ts).toBe(root!.ts);

    await wakeEverything();
    for (const iv of [first, second]) expect((await sentTo(ANN)).filter((c) => c.body.text.includes(`Question #${iv.slice(0, 8)}`))).toHaveLength(1);
    expect((await posted(channel)).filter((m) => blockText(m).includes("Before the move?"))).toHaveLength(1);
    expect((await posted(channel)).filter((m) => blockText(m).includes("After the move?"))).toHaveLength(1);
  });
});

describe("a chat's lane while a project moves", () => {
  it("holds back every row of the project, a denied-call notice (no event) as much as an event's, and none of other projects", async () => {
    const moving = await placed("Held while moving", "DB");
    const staying = await placed("Not moving", "DB");
    await env.DB.prepare("UPDATE projects SET moving_to = 'DB_1' WHERE id = ?1").bind(moving.project.id).run();
    const row = (id: string, projectId: string, seq: number | null): DueRow => ({
      id,
      project_id: projectId,
      seq,
      event_type: seq === null ? "permissions_denied" : "intervention_requested",
      payload: null,
      attempts: 0,
      next_attempt_at: new Date().toISOString(),
      created_at: new Date().toISOString(),
      event_task_id: null,
      event_actor: null,
      event_data: null,
      event_traceparent: null,
      event_created_at: null,
    });
    const rows = [row("denied", moving.project.id, null), row("asked", moving.project.id, 7), row("other", staying.project.id, null)];
    const lane = env.TELEGRAM_CHAT.get(env.TELEGRAM_CHAT.idFromName(`held-${unique()}`));
    const held = await runInDurableObject(lane, (chat) => (chat as unknown as { heldRows(r: DueRow[]): Promise<Set<string>> }).heldRows(rows));
    expect([...held].sort()).toEqual(["asked", "denied"]);
    await env.DB.prepare("UPDATE projects SET moving_to = NULL WHERE id = ?1").bind(moving.project.id).run();
  });
});
