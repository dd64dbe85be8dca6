/**
 * The Telegram bot end to end, against a fake Bot API (test/bot-api-setup.ts)
 * at the network edge: setup, linking by code, notifications from the outbox,
 * and buttons and replies acting as the linked person with their role.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { hookTime, postPermissionLog, type HookLogEntry } from "./fake-daemon";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, until as waitUntil } from "./helpers";
import { BOT_API, botCalls, chat, from, SECRET, sentTo, telegramUpdates } from "./telegram-updates";
import { cli, createWorld, expectOk, openSession, T, taskIn, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
const calls = botCalls;
const { update, message, press, nextMessageId } = telegramUpdates({ updateId: 1, messageId: 5000 });

const until = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 8000) => waitUntil(read, done, what, timeoutMs);

/** Links a chat to a person the way a person does: a code from the hub, then /start <code> in the chat. */
async function link(token: string, chatId: number) {
  const { json } = await expectOk(call("/api/v1/auth/me/telegram-link", { method: "POST", token }), 201);
  expect((await message(chatId, `/start ${json.code}`)).status).toBe(200);
  await until(
    () => sentTo(chatId),
    (m) => m.some((c) => c.body.text.startsWith("Linked to")),
    "the link confirmed",
  );
  return json;
}

/** Outbox rows recorded for a chat about one task's events of a type. */
async function owed(chatId: number, taskId: string, type: string) {
  const row = await env.DB.prepare(
    `SELECT COUNT(*) AS n FROM outbox o JOIN events e ON e.project_id = o.project_id AND e.seq = o.seq JOIN telegram_links l ON l.id = o.target_id
     WHERE o.target_kind = 'telegram' AND l.chat_id = ?1 AND e.task_id = ?2 AND e.type = ?3`,
  )
    .bind(String(chatId), taskId, type)
    .first<{ n: number }>();
  return row!.n;
}

/** Sends a chat's message and waits for the bot's answer to it. */
async function answerTo(chatId: number, text: string) {
  const before = (await sentTo(chatId)).length;
  await message(chatId, text);
  return (
    await until(
      () => sentTo(chatId),
      (m) => m.length > before,
      `the answer to ${text}`,
    )
  ).at(-1)!.body as { text: string; parse_mode: string };
}

/** Sends `text` and waits for a message to the chat after it that says `expected`, whatever else arrives meanwhile. */
async function answerSaying(chatId: number, text: string, expected: string) {
  const before = (await sentTo(chatId)).length;
  await message(chatId, text);
  await until(
    () => sentTo(chatId),
    (m) => m.slice(before).some((s) => String((s.body as { text?: string }).text).includes(expected)),
    `an answer to ${text} saying ${expected}`,
  );
}

const refuse = (chatId: number, refusal: Record<string, unknown>) =>
  fetch(`${BOT_API}/control/refuse`, { method: "POST", body: JSON.stringify({ chat_id: chatId, ...refusal }) });

const ANN = 7001;
const VIC = 7002;

beforeAll(async () => {
  w = await createWorld("Telegram project");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  expect((await call("/api/v1/telegram/setup", { method: "POST", token: w.admin })).status).toBe(200);
  await link(w.member.token, ANN);
  await link(viewer.token, VIC);
});

/** A task of the world's project brought to `plan_review` by its agent. */
async function taskInPlanReview(title: string) {
  const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker", require_plan: true }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/plan`, { plan: { steps: ["read", "write <tests>"] } }));
  return json.id as string;
}

const taskStatus = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.status;

describe("setting the bot up and linking a chat", () => {
  it("asks Telegram who the bot is and points its webhook at the hub, with the secret", async () => {
    const setup = await expectOk(call("/api/v1/telegram/setup", { method: "POST", token: w.admin }));
    expect(setup.json).toEqual({ bot_username: "hub_test_bot", webhook_url: "https://hub.test/telegram/webhook" });
    const webhook = (await calls()).filter((c) => c.method === "setWebhook").at(-1)!;
    expect(webhook.body).toMatchObject({ url: "https://hub.test/telegram/webhook", secret_token: "test-telegram-webhook-secret" });
    expectProblem(await call("/api/v1/telegram/setup", { method: "POST", token: w.member.token }), 403, "FORBIDDEN");
  });

  it("links a chat with a one-time code from the bot's deep link, once", async () => {
    const someone = await createUser(w.admin, "member");
    const code = await link(someone.token, 7100);
    expect(code.deep_link).toBe(`https://t.me/hub_test_bot?start=${code.code}`);
    expect((await call("/api/v1/auth/me/telegram", { token: someone.token })).json).toMatchObject({ linked: true, muted: false });
    // The code is spent: a second chat cannot use it.
    await message(7101, `/start ${code.code}`);
    const reply = await until(
      () => sentTo(7101),
      (m) => m.length > 0,
      "the refusal",
    );
    expect(reply[0]!.body.text).toContain("expired or was used");
    expect((await call("/api/v1/auth/me/telegram", { method: "DELETE", token: someone.token })).status).toBe(204);
    expect((await call("/api/v1/auth/me/telegram", { token: someone.token })).json.linked).toBe(false);
  });

  it("refuses an update without Telegram's secret token (401)", async () => {
    expect(
      (await update({ message: { message_id: 1, date: 0, chat: chat(ANN), from: from(ANN), text: "hi" } }, { "X-Telegram-Bot-Api-Secret-Token": "wrong" }))
        .status,
    ).toBe(401);
    expectProblem(await update({ message: { message_id: 1, date: 0, chat: chat(ANN), from: from(ANN), text: "hi" } }, {}), 401, "UNAUTHORIZED");
  });

  it("refuses an update that is not JSON (400) or has no update_id (422), before the bot reads it", async () => {
    expectProblem(await call("/telegram/webhook", { raw: "not json", headers: SECRET }), 400, "MALFORMED_JSON");
    const nameless = await call("/telegram/webhook", { body: { message: { text: "hi" } }, headers: SECRET });
    expectProblem(nameless, 422, "VALIDATION_FAILED");
    expect(nameless.json.errors).toEqual([expect.objectContaining({ path: "update_id" })]);
  });
});

describe("notifications and answers", () => {
  it("tells linked people of a question, escaped, and takes a reply as the answer", async () => {
    const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Needs <input> & care", project_id: w.project.id }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    const help = await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${json.id}/help`, { question: "Use <b>prod</b> or staging?", intervention_type: "question" }),
    );
    const asked = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes("Question #")),
      "the question",
    );
    const q = asked.find((c) => c.body.text.includes("Question #"))!;
    expect(q.body.parse_mode).toBe("HTML");
    expect(q.body.text).toContain("Needs &lt;input&gt; &amp; care");
    expect(q.body.text).toContain("Use &lt;b&gt;prod&lt;/b&gt; or staging?");
    expect(q.body.text).toContain(`Question #${help.json.intervention_id.slice(0, 8)}`);
    // The viewer hears of it too (they see the project).
    await until(
      () => sentTo(VIC),
      (m) => m.some((c) => c.body.text.includes(`Question #${help.json.intervention_id.slice(0, 8)}`)),
      "the viewer's copy",
    );

    await message(ANN, "staging, please", q.body.text);
    await until(
      () => taskStatus(json.id),
      (s) => s === "running",
      "the task running again",
    );
    const iv = (await call(`/api/v1/interventions?task_id=${json.id}`, { token: w.admin })).json.find((i: any) => i.id === help.json.intervention_id);
    expect(iv).toMatchObject({ status: "responded", response: "staging, please", responded_by: w.member.email });
  });

  it("says nothing of a question one agent asks another", async () => {
    const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Between agents", project_id: w.project.id }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    const toAgent = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/help`, { question: "Which port?", target_session_id: w.orchestratorSession }));
    const toPeople = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/help`, { question: "Which region?" }));
    // Asked after the agent's question: once it has arrived, the agent's would have too.
    const sent = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Question #${toPeople.json.intervention_id.slice(0, 8)}`)),
      "the question to people",
    );
    expect(sent.some((c) => c.body.text.includes(`Question #${toAgent.json.intervention_id.slice(0, 8)}`))).toBe(false);
    expect(await owed(ANN, json.id, "intervention_requested")).toBe(1);
  });

  it("takes an approval by its button, and the agent sees the answer", async () => {
    const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Deploy gate", project_id: w.project.id }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    const help = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/help`, { question: "Deploy to production now?", intervention_type: "approval" }));
    const ivId = help.json.intervention_id as string;
    const asked = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Question #${ivId.slice(0, 8)}`)),
      "the approval",
    );
    const buttons = asked.find((c) => c.body.text.includes(`Question #${ivId.slice(0, 8)}`))!.body.reply_markup.inline_keyboard[0];
    expect(buttons.map((b: any) => [b.text, b.callback_data])).toEqual([
      ["Approve", `iv:${ivId}:y`],
      ["Reject", `iv:${ivId}:n`],
    ]);
    // The viewer's press is refused; the member's answers.
    await press(VIC, `iv:${ivId}:y`);
    expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({ text: "Viewers can only read this project" });
    await press(ANN, `iv:${ivId}:y`);
    expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({ text: "Answered: approved" });
    const seen = (await cli(w.worker.apiKey, "GET", `/api/v1/server/interventions?task_id=${json.id}`)).json.find((i: any) => i.id === ivId);
    expect(seen).toMatchObject({ status: "responded", response: "approved" });
  });

  it("approves a plan by its button, and asks for changes by button then reply", async () => {
    const id = await taskInPlanReview("Planned work");
    const plan = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Plan #${id.slice(0, 8)}`)),
      "the plan",
    );
    const msg = plan.find((c) => c.body.text.includes(`Plan #${id.slice(0, 8)}`))!;
    expect(msg.body.text).toContain("write &lt;tests&gt;");
    expect(msg.body.reply_markup.inline_keyboard[0].map((b: any) => b.callback_data)).toEqual([`pa:${id}`, `pr:${id}`]);
    await press(ANN, `pa:${id}`);
    expect(await taskStatus(id)).toBe("running");
    const answered = (await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!;
    expect(answered.body).toMatchObject({ text: "Plan approved" });

    const again = await taskInPlanReview("Plan to change");
    await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes(`Plan #${again.slice(0, 8)}`)),
      "the second plan",
    );
    await press(ANN, `pr:${again}`);
    const prompt = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.startsWith("What should change")),
      "the prompt",
    );
    const ask = prompt.find((c) => c.body.text.startsWith("What should change"))!;
    expect(ask.body.reply_markup.force_reply).toBe(true);
    await message(ANN, "Smaller steps", ask.body.text);
    expect(await taskStatus(again)).toBe("planning");
    const task = (await call(`/api/v1/tasks/${again}`, { token: w.admin })).json;
    expect(task.plan_feedback ?? task.feedback).toBe("Smaller steps");
  });

  it("tells of an agent's task awaiting approval, and approves it by its button (not a viewer's)", async () => {
    const gate = (on: boolean) =>
      call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: on } } });
    await expectOk(gate(true));
    try {
      const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Rotate <all> keys", project_id: w.project.id }), 201);
      const told = await until(
        () => sentTo(ANN),
        (m) => m.some((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `ap:${json.id}`),
        "the task to approve",
      );
      const msg = told.find((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `ap:${json.id}`)!;
      expect(msg.body.text).toContain("Task to approve");
      expect(msg.body.text).toContain("Rotate &lt;all&gt; keys");
      expect(msg.body.text).toContain(`agent:${w.orchestrator.name} created it`);
      expect(msg.body.reply_markup.inline_keyboard).toEqual([[{ text: "Approve", callback_data: `ap:${json.id}` }]]);
      await until(
        () => sentTo(VIC),
        (m) => m.some((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `ap:${json.id}`),
        "the viewer's copy",
      );
      await press(VIC, `ap:${json.id}`);
      expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({
        text: "Viewers can only read this project",
        show_alert: true,
      });
      expect((await call(`/api/v1/tasks/${json.id}`, { token: w.admin })).json.awaiting_approval).toBe(true);
      await press(ANN, `ap:${json.id}`);
      expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({ text: "Task approved" });
      const approved = (await call(`/api/v1/tasks/${json.id}`, { token: w.admin })).json;
      expect(approved.awaiting_approval).toBe(false);
      const events = (await call(`/api/v1/tasks/${json.id}/events`, { token: w.admin })).json.events;
      expect(events.find((e: any) => e.type === "task_approved").actor).toBe(w.member.email);
      // Pressed again: the hub's refusal is the answer.
      await press(ANN, `ap:${json.id}`);
      expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({
        show_alert: true,
        text: expect.stringContaining("not waiting for approval"),
      });
    } finally {
      await expectOk(gate(false));
    }
  });

  it("changes nothing when a viewer presses a button, and tells them why", async () => {
    const id = await taskInPlanReview("Viewer's plan");
    await until(
      () => sentTo(VIC),
      (m) => m.some((c) => c.body.text.includes(`Plan #${id.slice(0, 8)}`)),
      "the viewer's plan",
    );
    await press(VIC, `pa:${id}`);
    const answered = (await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!;
    expect(answered.body).toMatchObject({ text: "Viewers can only read this project", show_alert: true });
    expect(await taskStatus(id)).toBe("plan_review");
  });

  it("offers a retry on a failure, and tells the creator of a task when it is done", async () => {
    const { json } = await expectOk(
      call(T.replace("/server", ""), { token: w.member.token, body: { title: "Mine to finish", project_id: w.project.id } }),
      201,
    );
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/fail`, { error: "disk full" }));
    const failed = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `rt:${json.id}`),
      "the failure",
    );
    expect(failed.at(-1)!.body.text).toContain("disk full");
    await press(ANN, `rt:${json.id}`);
    expect(await taskStatus(json.id)).toBe("pending");

    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/complete`, { result: { summary: "all green" } }));
    await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.text.includes("Task done") && c.body.text.includes("all green")),
      "the creator told",
    );
    // Only its creator hears a task is done: nothing was even recorded for the viewer.
    expect(await owed(VIC, json.id, "task_completed")).toBe(0);
    expect(await owed(ANN, json.id, "task_completed")).toBe(1);
  });

  it("cuts a long title and error between code points, so Telegram takes the message", async () => {
    // Cut by UTF-16 units, each would end in half an emoji, which Telegram refuses (and the message was lost).
    const title = `${"a".repeat(199)}😀 and more`;
    const error = `${"b".repeat(1499)}😀 and more`;
    const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/fail`, { error }));
    const sent = await until(
      () => sentTo(ANN),
      (m) => m.some((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `rt:${json.id}`),
      "the failure",
    );
    const failure = sent.find((c) => c.body.reply_markup?.inline_keyboard?.[0]?.[0]?.callback_data === `rt:${json.id}`)!;
    expect(failure.refused).toBeUndefined();
    expect(failure.body.text).toContain(`${"a".repeat(199)}…`);
    expect(failure.body.text).toContain(`${"b".repeat(1499)}…`);
  });

  it("waits as long as Telegram says when it answers 429, then sends in order", async () => {
    await refuse(ANN, { times: 1, error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 });
    const id = await taskInPlanReview("Throttled");
    const attempts = await until(
      async () =>
        (await calls()).filter((c) => c.method === "sendMessage" && Number(c.body.chat_id) === ANN && c.body.text.includes(`Plan #${id.slice(0, 8)}`)),
      (m) => m.length >= 2,
      "the retry after 429",
      10_000,
    );
    // Telegram's 3 s, not the 1 s pace nor the 5 s retry schedule.
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(3000);
    expect(attempts[1]!.at - attempts[0]!.at).toBeLessThan(4500);
  });

  it("gives up a message Telegram will not take (400) and goes on; a blocked bot (403) ends the link", async () => {
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    const chatId = 7300;
    await link(person.token, chatId);
    await refuse(chatId, { times: 1, error_code: 400, description: "Bad Request: can't parse entities" });
    const first = await taskInPlanReview("Unparsable");
    const second = await taskInPlanReview("Parsable");
    await until(
      () => sentTo(chatId),
      (m) => m.some((c) => c.body.text.includes(`Plan #${second.slice(0, 8)}`)),
      "the next message",
    );
    expect((await sentTo(chatId)).filter((c) => c.body.text.includes(`Plan #${first.slice(0, 8)}`))).toHaveLength(1);
    await refuse(chatId, { times: 5, error_code: 403, description: "Forbidden: bot was blocked by the user" });
    await taskInPlanReview("Blocked");
    await until(
      async () => (await call("/api/v1/auth/me/telegram", { token: person.token })).json.linked,
      (linked) => linked === false,
      "the link ended",
    );
  });

  it("refuses to link or act in a group chat", async () => {
    const person = await createUser(w.admin, "member");
    const { json } = await expectOk(call("/api/v1/auth/me/telegram-link", { method: "POST", token: person.token }), 201);
    const group = -100123;
    await update({
      message: {
        message_id: nextMessageId(),
        date: 0,
        chat: { id: group, type: "group", title: "Team" },
        from: from(7400),
        text: `/start ${json.code}`,
        entities: [{ type: "bot_command", offset: 0, length: 6 }],
      },
    });
    expect((await call("/api/v1/auth/me/telegram", { token: person.token })).json.linked).toBe(false);
    const id = await taskInPlanReview("Group press");
    await update({
      callback_query: {
        id: "cb-group",
        from: from(7400),
        chat_instance: "g",
        data: `pa:${id}`,
        message: { message_id: 1, date: 0, chat: { id: group, type: "group", title: "Team" }, text: "…" },
      },
    });
    expect((await calls()).filter((c) => c.method === "answerCallbackQuery").at(-1)!.body).toMatchObject({ text: "Only a private chat with the bot can act" });
    expect(await taskStatus(id)).toBe("plan_review");
  });
});

describe("/tasks", () => {
  it("lists the open tasks of the watched projects, those waiting on the person first, and counts what it leaves out", async () => {
    const chatId = 7500;
    const person = await createUser(w.admin, "member");
    await link(person.token, chatId);
    const ask = (text: string) => answerTo(chatId, text);
    expect((await ask("/tasks")).text).toContain("You watch no project");
    /** A project of the person's, with a worker of its own. */
    const projectNamed = async (name: string): Promise<World> => {
      const project = await createProject(w.admin, name);
      await addMember(w.admin, project.id, person.id);
      const worker = await registerAgent(w.admin, `worker-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
      return { ...w, project, worker, workerSession: await openSession(worker.apiKey, project.id, "worker") };
    };
    const busy = await projectNamed("Busy <kitchen>");
    const quiet = await projectNamed("Quiet");
    expect((await ask("/tasks")).text).toBe("No open tasks in the projects you watch.");
    const ids: Record<string, string> = {};
    for (const status of ["pending", "running", "done", "needs_human", "failed", "assigned", "plan_review", "cancelled"])
      ids[status] = (await taskIn(busy, status)).id;
    const answer = await ask("/tasks");
    expect(answer.parse_mode).toBe("HTML");
    const lines = answer.text.split("\n");
    const listed = (id: string) => lines.findIndex((l) => l.includes(id.slice(0, 8)));
    // Waiting on a person first, then at work, then waiting for an agent; nothing finished.
    expect(["needs_human", "plan_review", "running", "assigned", "pending"].map((s) => listed(ids[s]!))).toEqual([
      lines.indexOf("<b>Needs you</b>") + 1,
      lines.indexOf("<b>Needs you</b>") + 2,
      lines.indexOf("<b>Running and waiting</b>") + 1,
      lines.indexOf("<b>Running and waiting</b>") + 2,
      lines.indexOf("<b>Running and waiting</b>") + 3,
    ]);
    expect(lines.indexOf("<b>Needs you</b>")).toBe(0);
    for (const s of ["done", "failed", "cancelled"]) expect(listed(ids[s]!), s).toBe(-1);
    expect(lines[listed(ids.needs_human!)]).toContain("· <i>needs_human</i> · Busy &lt;kitchen&gt;");
    // More than a message holds: the first ones, and a count of the rest.
    for (let i = 0; i < 14; i++) await taskIn(quiet, "pending");
    const capped = (await ask("/tasks")).text;
    expect(capped.split("\n").filter((l) => l.startsWith("<code>"))).toHaveLength(15);
    expect(capped).toContain(ids.needs_human!.slice(0, 8));
    expect(capped).toMatch(/…and 4 more open tasks/);
    // A project no longer watched is left out.
    await ask("/watch Quiet");
    const watched = (await ask("/tasks")).text;
    expect(watched.split("\n").filter((l) => l.startsWith("<code>"))).toHaveLength(5);
    expect(watched).not.toContain("more open");
    // An agent's task awaiting approval needs the person too: after the question and the plan.
    await expectOk(call(`/api/v1/projects/${busy.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: true } } }));
    const { json: held } = await expectOk(cli(busy.worker.apiKey, "POST", T, { title: "Wipe the cache", project_id: busy.project.id }), 201);
    const gated = (await ask("/tasks")).text.split("\n");
    const heldAt = gated.findIndex((l) => l.includes(held.id.slice(0, 8)));
    expect(heldAt).toBe(gated.indexOf("<b>Needs you</b>") + 3);
    expect(gated[heldAt]).toContain("· <i>awaiting approval</i> · Busy &lt;kitchen&gt;");
  });
});

describe("commands", () => {
  it("lists projects and tasks, shows a task, watches, mutes and unlinks", async () => {
    const chatId = 7200;
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    await link(person.token, chatId);
    const last = async () => (await sentTo(chatId)).at(-1)!.body.text as string;
    const ask = async (text: string) => {
      const before = (await sentTo(chatId)).length;
      await message(chatId, text);
      await until(
        () => sentTo(chatId),
        (m) => m.length > before,
        `the answer to ${text}`,
      );
      return last();
    };
    expect(await ask("/projects")).toContain("Telegram project");
    const id = await taskInPlanReview("Listed task");
    expect(await ask("/tasks")).toContain(id.slice(0, 8));
    expect(await ask(`/task ${id.slice(0, 8)}`)).toContain("Listed task");
    expect(await ask("/task ffffffff")).toContain("No task");
    expect(await ask("/watch Telegram project")).toContain("No longer watching");
    const quiet = await taskInPlanReview("Unwatched");
    expect(await ask("/watch Telegram project")).toContain("Watching");
    expect(await ask("/mute")).toContain("Muted");
    const muted = await taskInPlanReview("Muted");
    expect(await ask("/mute")).toContain("on again");
    // Nothing was recorded for the chat while it did not watch the project, or was muted.
    expect(await owed(chatId, quiet, "plan_submitted")).toBe(0);
    expect(await owed(chatId, muted, "plan_submitted")).toBe(0);
    expect(await owed(chatId, id, "plan_submitted")).toBe(1);
    expect(await ask("/help")).toContain("/watch");
    expect(await ask("/unlink")).toContain("Unlinked");
    expect(await ask("/projects")).toContain("not linked");
  });
});

describe("denied tool calls", () => {
  const ask = async (chatId: number, text: string) => (await answerTo(chatId, text)).text;
  /** Notices of denied calls recorded for a chat. */
  const notices = async (chatId: number) => {
    const { results } = await env.DB.prepare(
      `SELECT o.payload FROM outbox o JOIN telegram_links l ON l.id = o.target_id WHERE o.target_kind = 'telegram' AND o.event_type = 'permissions_denied' AND l.chat_id = ?1`,
    )
      .bind(String(chatId))
      .all<{ payload: string }>();
    return results.map((r) => JSON.parse(r.payload));
  };
  const deniedMessages = async (chatId: number) => (await sentTo(chatId)).filter((c) => /tool calls? denied/.test(c.body.text));
  let clock = Date.now() - 60_000;
  const hookEntry = (fields: Partial<HookLogEntry>): HookLogEntry => ({
    session_id: w.workerSession,
    project_id: w.project.id,
    tool_name: "Bash",
    tool_input: { command: "npm test" },
    decision: "allowed",
    matched_rule_id: null,
    reason: null,
    agent_name: "claude",
    created_at: hookTime((clock += 1000)),
    ...fields,
  });
  const post = async (entries: HookLogEntry[]) => expect((await postPermissionLog(w.worker.apiKey, entries)).status).toBe(201);
  /** Two members of the project with linked chats: one stays, one leaves it. */
  const chatId = 7600;
  const leftChat = 7601;
  let leaving: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    const person = await createUser(w.admin, "member");
    leaving = await createUser(w.admin, "member");
    for (const [who, chat] of [
      [person, chatId],
      [leaving, leftChat],
    ] as const) {
      await addMember(w.admin, w.project.id, who.id);
      await link(who.token, chat);
    }
  });

  it("is off until asked for, toggles per project, and /denied lists where it is on", async () => {
    expect(await ask(chatId, "/denied")).toContain("in no project");
    await post([hookEntry({ decision: "denied", tool_name: "WebFetch", tool_input: { url: "https://example.com" } })]);
    expect(await notices(chatId)).toEqual([]);
    expect(await ask(chatId, "/denied Nowhere")).toContain("Which project?");
    expect(await ask(chatId, "/denied Telegram project")).toContain("You will hear of denied tool calls in <b>Telegram project</b>");
    expect(await ask(chatId, "/denied")).toContain("• <b>Telegram project</b>");
    expect(await ask(chatId, "/denied telegram")).toContain("No longer telling you");
    expect(await ask(chatId, "/denied")).toContain("in no project");
    expect(await ask(chatId, "/help")).toContain("/denied");
  });

  it("sends one summary per post of the denied calls, with their session, task and rule, and nothing for allowed or asked ones", async () => {
    await ask(chatId, "/denied Telegram project");
    const { json: rule } = await expectOk(
      call("/api/v1/approval-rules", {
        token: w.admin,
        body: { name: "No <fetching>", tool_pattern: "WebFetch", action: "deny", scope_type: "project", scope_id: w.project.id },
      }),
      201,
    );
    const running = (await taskIn(w, "running")).id;
    await post([hookEntry({ decision: "allowed" }), hookEntry({ decision: "asked", tool_name: "Write" })]);
    expect(await notices(chatId)).toEqual([]);
    const long = "x".repeat(5000);
    await post([
      hookEntry({ decision: "allowed" }),
      ...Array.from({ length: 5 }, (_, i) =>
        hookEntry({
          decision: "denied",
          tool_name: "WebFetch",
          tool_input: { url: `https://example.com/${i}${i === 0 ? long : ""}` },
          matched_rule_id: rule.id,
        }),
      ),
    ]);
    const [notice, ...others] = await notices(chatId);
    expect(others).toEqual([]);
    expect(notice.count).toBe(5);
    expect(notice.calls).toHaveLength(3);
    expect(notice.calls[0]).toMatchObject({ tool_name: "WebFetch", session_id: w.workerSession, task_id: running, matched_rule_id: rule.id });
    expect(notice.calls[0].tool_input.length).toBeLessThanOrEqual(300);
    const [sent] = await until(
      () => deniedMessages(chatId),
      (m) => m.length > 0,
      "the denied calls told",
    );
    const text = sent!.body.text as string;
    expect(sent!.body.parse_mode).toBe("HTML");
    expect(text).toMatch(/^<b>5 tool calls denied<\/b> · Telegram project/);
    expect(text).toContain("https://example.com/1");
    expect(text).not.toContain("https://example.com/3");
    expect(text).toContain("…and 2 more");
    expect(text).toContain("rule No &lt;fetching&gt;");
    expect(text).toContain("session worker");
    expect(text.length).toBeLessThan(4096);
  });

  it("never tells a muted person, or one who no longer sees the project", async () => {
    const before = (await notices(chatId)).length;
    await ask(leftChat, "/denied Telegram project");
    expect(await ask(chatId, "/mute")).toContain("Muted");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members/${leaving.id}`, { method: "DELETE", token: w.admin }));
    await post([hookEntry({ decision: "denied", tool_name: "Bash", tool_input: { command: "rm -rf /" } })]);
    expect(await notices(chatId)).toHaveLength(before);
    expect(await notices(leftChat)).toEqual([]);
    expect(await ask(chatId, "/mute")).toContain("on again");
    await post([hookEntry({ decision: "denied", tool_name: "Bash", tool_input: { command: "rm -rf ~" } })]);
    expect(await notices(chatId)).toHaveLength(before + 1);
    expect(await notices(leftChat)).toEqual([]);
    expect(await deniedMessages(leftChat)).toEqual([]);
  });
});

describe("/run", () => {
  it("starts a template's graph as the person, reading typed parameters from the text, and says why when it cannot", async () => {
    const name = `Nightly triage ${crypto.randomUUID().slice(0, 4)}`;
    const template = (
      await expectOk(
        call(`/api/v1/projects/${w.project.id}/templates`, {
          token: w.member.token,
          body: {
            name,
            parameters: [
              { name: "area", type: "string", required: true },
              { name: "limit", type: "number", default: 10 },
            ],
            tasks: [
              { key: "triage", title: "Triage {{area}} (top {{limit}})" },
              { key: "report", title: "Report on {{area}}", dependencies: [{ on: "triage", dependency_type: "blocks" }] },
            ],
          },
        }),
        201,
      )
    ).json;
    const runs = async () => (await expectOk(call(`/api/v1/projects/${w.project.id}/runs?template_id=${template.id}`, { token: w.admin }))).json.runs;

    const started = await answerTo(ANN, `/run "${name.toLowerCase()}" area="login page" limit=3`);
    expect(started.text).toContain(`Started <b>${name}</b>`);
    const [run] = await runs();
    expect(run).toMatchObject({ source: "telegram", parameters: { area: "login page", limit: 3 }, status: "open" });
    const titles = await Promise.all(run.task_ids.map(async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.title));
    expect(titles).toEqual(["Triage login page (top 3)", "Report on login page"]);

    // The run's own notices (a plan to review) may reach the chat meanwhile: each refusal is looked for among what came after.
    await answerSaying(ANN, `/run "${name}" limit=many area=x`, "parameters.limit: must be a number");
    await answerSaying(ANN, `/run "${name}"`, "parameters.area: is required");
    await answerSaying(ANN, `/run "${name}" area`, "is not name=value");
    expect((await answerTo(ANN, "/run no-such-template")).text).toContain("No template named");
    // A viewer of the project is told so, and nothing starts.
    expect((await answerTo(VIC, `/run "${name}" area=x`)).text).toContain("Viewers can only read this project");
    expect(await runs()).toHaveLength(1);
  });
});
