/**
 * Buttons and modals of the hub's Slack messages, against the fake Slack (test/slack-api-setup.ts): each click or
 * submission acts as the linked person with their role, is settled before Slack is answered, and a refusal is told
 * privately through the click's response URL (or shown in the modal).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createUser, until } from "./helpers";
import { click, installTeam, linkSlack, responded, submit, type SlackUser } from "./slack-people";
import { interaction, postSigned, SLACK_ROOT, slackCalls } from "./slack";
import { cli, createWorld, expectOk, T, taskIn, worldUnder, type World } from "./task-world";

const TEAM = "TCLICKS";
let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
const ann: SlackUser = { team: TEAM, user: "UANN", channel: "CCLICKS" };
const vic: SlackUser = { team: TEAM, user: "UVIC", channel: "CCLICKS" };
const stranger: SlackUser = { team: TEAM, user: "USTRANGER", channel: "CCLICKS" };

beforeAll(async () => {
  w = await createWorld("Slack clicks");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  await installTeam(TEAM);
  await linkSlack(w.member.token, ann);
  await linkSlack(viewer.token, vic);
});

/** A running task of the world's project whose worker asks people a question of this type. */
async function asked(type: "approval" | "question", question = "Deploy to production now?") {
  const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: `Gate ${crypto.randomUUID().slice(0, 4)}`, project_id: w.project.id }), 201);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
  const help = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/help`, { question, intervention_type: type }));
  return { taskId: json.id as string, ivId: help.json.intervention_id as string };
}

const task = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json;
const intervention = async (taskId: string, ivId: string) =>
  (await call(`/api/v1/interventions?task_id=${taskId}`, { token: w.admin })).json.find((i: any) => i.id === ivId);
const events = async (taskId: string, type: string) =>
  (await call(`/api/v1/tasks/${taskId}/events`, { token: w.admin })).json.events.filter((e: any) => e.type === type);

/** Nothing was posted to a response URL, a moment after the click was answered. */
async function nothingPosted(name: string) {
  await new Promise((r) => setTimeout(r, 200));
  expect((await slackCalls("response_url")).filter((c) => c.params.path === `/response/${name}`)).toEqual([]);
}

describe("an approval's buttons", () => {
  it("approves as the linked person: the answer is settled before Slack is answered, and the task runs again", async () => {
    const { taskId, ivId } = await asked("approval");
    const { res, name } = await click(ann, `iv:${ivId}:y`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(await intervention(taskId, ivId)).toMatchObject({ status: "responded", response: "approved", responded_by: w.member.email });
    expect((await task(taskId)).status).toBe("running");
    const [responded] = await events(taskId, "intervention_responded");
    expect(responded.actor).toBe(w.member.email);
    await nothingPosted(name);
  });

  it("refuses an unlinked Slack user's click, and tells them privately how to link", async () => {
    const { taskId, ivId } = await asked("approval");
    const { res, name } = await click(stranger, `iv:${ivId}:n`);
    expect(res.status).toBe(200);
    const told = await responded(name);
    expect(told).toMatchObject({ response_type: "ephemeral", replace_original: false });
    expect(told.text).toContain("not linked");
    expect(told.text).toContain("/orc link &lt;code&gt;");
    expect((await intervention(taskId, ivId)).status).toBe("pending");
    expect((await task(taskId)).status).toBe("needs_human");
  });

  it("counts a deactivated person's Slack user as unlinked", async () => {
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    const them: SlackUser = { team: TEAM, user: "UDEACT", channel: "CCLICKS" };
    await linkSlack(person.token, them);
    await expectOk(call(`/api/v1/users/${person.id}`, { method: "PATCH", token: w.admin, body: { active: false } }));
    const { taskId, ivId } = await asked("approval");
    const { name } = await click(them, `iv:${ivId}:y`);
    expect((await responded(name)).text).toContain("not linked to an active Orchestratia account");
    expect((await intervention(taskId, ivId)).status).toBe("pending");
  });

  it("refuses a viewer's click, and tells them why", async () => {
    const { taskId, ivId } = await asked("approval");
    const { name } = await click(vic, `iv:${ivId}:y`);
    expect((await responded(name)).text).toBe("Viewers can only read this project");
    expect((await intervention(taskId, ivId)).status).toBe("pending");
  });

  it("answers once when 40 clicks arrive at once; the others are told who answered", async () => {
    const { taskId, ivId } = await asked("approval");
    const clicks = await Promise.all(Array.from({ length: 40 }, (_, i) => click(ann, `iv:${ivId}:${i % 2 ? "y" : "n"}`)));
    expect(clicks.map((c) => c.res.status)).toEqual(Array(40).fill(200));
    expect(await events(taskId, "intervention_responded")).toHaveLength(1);
    const told = await until(
      async () => {
        const names = new Set(clicks.map((c) => `/response/${c.name}`));
        return (await slackCalls("response_url")).filter((c) => names.has(c.params.path));
      },
      (calls) => calls.length >= 39,
      "the 39 refusals",
    );
    expect(told).toHaveLength(39);
    for (const t of told) expect(t.params.text).toBe(`Already answered by ${w.member.email}`);
    expect((await intervention(taskId, ivId)).status).toBe("responded");
  });

  it("tells of a click on a question that is gone or on a button that means nothing", async () => {
    const { name } = await click(ann, `iv:${crypto.randomUUID()}:y`);
    expect((await responded(name)).text).toContain("Not found");
    const other = await click(ann, "zz:nothing");
    expect((await responded(other.name)).text).toBe("This button no longer does anything");
  });
});

describe("another project's questions and plans", () => {
  it("open no modal and take no answer from someone who cannot see the project", async () => {
    const other = await worldUnder(w.admin, `Not ann's ${crypto.randomUUID().slice(0, 4)}`);
    const { json } = await expectOk(cli(other.orchestrator.apiKey, "POST", T, { title: "Secret work", project_id: other.project.id }), 201);
    await expectOk(cli(other.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(other.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
    const ivId = (await expectOk(cli(other.worker.apiKey, "POST", `${T}/${json.id}/help`, { question: "Secret question?" }))).json.intervention_id as string;
    for (const value of [`it:${ivId}`, `pr:${json.id}`]) {
      const { name } = await click(ann, value);
      expect((await responded(name)).text).toContain("Not found");
      expect((await slackCalls("views.open")).filter((c) => c.params.trigger_id === `trig.${name}`)).toEqual([]);
    }
    const submitted = await submit(ann, `answer:${ivId}`, "my answer");
    expect((await submitted.json()) as any).toMatchObject({ response_action: "errors" });
    expect((await call(`/api/v1/interventions?task_id=${json.id}`, { token: w.admin })).json[0].status).toBe("pending");
  });
});

describe("a free-text question's Answer", () => {
  it("opens the answer modal, and its submission answers the question", async () => {
    const { taskId, ivId } = await asked("question", "Which <region> & why?");
    const { res, name } = await click(ann, `it:${ivId}`);
    expect(res.status).toBe(200);
    const opened = (await slackCalls("views.open")).filter((c) => c.params.trigger_id === `trig.${name}`);
    expect(opened).toHaveLength(1);
    expect(opened[0]!.token).toBe(`xoxb-${TEAM}-x`);
    const view = opened[0]!.params.view;
    expect(view).toMatchObject({ type: "modal", callback_id: `answer:${ivId}` });
    expect(JSON.parse(view.private_metadata)).toEqual({ channel: "CCLICKS", ts: "1800000000.000100" });
    expect(view.blocks[0].text.text).toContain(">Which &lt;region&gt; &amp; why?");
    expect(view.blocks[1]).toMatchObject({ type: "input", block_id: "text", element: { type: "plain_text_input", action_id: "text" } });

    // An empty answer is shown in the modal, and answers nothing.
    for (const text of ["   ", null]) {
      const empty = await submit(ann, `answer:${ivId}`, text);
      expect(await empty.json()).toEqual({ response_action: "errors", errors: { text: "Write an answer first" } });
    }
    expect((await intervention(taskId, ivId)).status).toBe("pending");
    // An unlinked Slack user's submission is refused in the modal, in plain text.
    const unlinked = ((await (await submit(stranger, `answer:${ivId}`, "eu-west")).json()) as any).errors.text as string;
    expect(unlinked).toContain("not linked to an active Orchestratia account");
    expect(unlinked).toContain("type /orc link <code> here");
    // A viewer's submission is refused in the modal.
    const refused = await submit(vic, `answer:${ivId}`, "eu-west");
    expect(await refused.json()).toEqual({ response_action: "errors", errors: { text: "Viewers can only read this project" } });

    const sent = await submit(ann, `answer:${ivId}`, "eu-west, for latency");
    expect(sent.status).toBe(200);
    expect(await sent.text()).toBe("");
    expect(await intervention(taskId, ivId)).toMatchObject({ status: "responded", response: "eu-west, for latency", responded_by: w.member.email });
    expect((await task(taskId)).status).toBe("running");
    // Answered: submitting again says by whom.
    const again = await submit(ann, `answer:${ivId}`, "another");
    expect(((await again.json()) as any).errors.text).toBe(`Already answered by ${w.member.email}`);
  });

  it("tells a viewer privately, and opens no modal", async () => {
    const { ivId } = await asked("question");
    const { name } = await click(vic, `it:${ivId}`);
    expect((await responded(name)).text).toBe("Viewers can only read this project");
    expect((await slackCalls("views.open")).filter((c) => c.params.trigger_id === `trig.${name}`)).toEqual([]);
  });
});

describe("a plan's and a failure's buttons", () => {
  it("approves a plan", async () => {
    const { id } = await taskIn(w, "plan_review");
    const { name } = await click(vic, `pa:${id}`);
    expect((await responded(name)).text).toBe("Viewers can only read this project");
    expect((await task(id)).status).toBe("plan_review");
    await click(ann, `pa:${id}`);
    expect((await task(id)).status).toBe("running");
    expect((await events(id, "plan_approved"))[0].actor).toBe(w.member.email);
  });

  it("asks for a plan's changes through the modal", async () => {
    const { id } = await taskIn(w, "plan_review");
    const { name } = await click(ann, `pr:${id}`);
    const [opened] = (await slackCalls("views.open")).filter((c) => c.params.trigger_id === `trig.${name}`);
    expect(opened!.params.view).toMatchObject({ type: "modal", callback_id: `changes:${id}` });
    const empty = await submit(ann, `changes:${id}`, "");
    expect(await empty.json()).toEqual({ response_action: "errors", errors: { text: "Say what should change first" } });
    const sent = await submit(ann, `changes:${id}`, "Smaller steps");
    expect(sent.status).toBe(200);
    const after = await task(id);
    expect(after.status).toBe("planning");
    expect(after.plan_feedback ?? after.feedback).toBe("Smaller steps");
    // Not waiting for review any more: the button says so and opens nothing.
    const late = await click(ann, `pr:${id}`);
    expect((await responded(late.name)).text).toContain("no longer waiting for review");
  });

  it("retries a failed task, and tells of a retry the hub refuses", async () => {
    const { id } = await taskIn(w, "failed");
    const { name } = await click(ann, `rt:${id}`);
    expect((await task(id)).status).toBe("pending");
    await nothingPosted(name);
    const again = await click(ann, `rt:${id}`);
    expect((await responded(again.name)).text).toBeTruthy();
    expect((await task(id)).status).toBe("pending");
  });

  it("approves a task awaiting approval", async () => {
    const gate = (on: boolean) =>
      call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: on } } });
    await expectOk(gate(true));
    try {
      const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "Rotate keys", project_id: w.project.id }), 201);
      expect((await task(json.id)).awaiting_approval).toBe(true);
      await click(ann, `ap:${json.id}`);
      expect((await task(json.id)).awaiting_approval).toBe(false);
      expect((await events(json.id, "task_approved"))[0].actor).toBe(w.member.email);
    } finally {
      await expectOk(gate(false));
    }
  });
});

describe("a refusal's response URL", () => {
  it("is not posted to when it is not Slack's", async () => {
    const { ivId } = await asked("approval");
    const res = await postSigned(
      "/slack/interactions",
      interaction({
        type: "block_actions",
        team: { id: TEAM },
        user: { id: "USTRANGER" },
        trigger_id: "trig.elsewhere",
        actions: [{ action_id: `iv:${ivId}:y`, value: `iv:${ivId}:y` }],
        // The fake's own server under another name: it records what reaches it.
        response_url: `http://localhost:${new URL(SLACK_ROOT).port}/response/elsewhere-click`,
      }),
    );
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await slackCalls("response_url")).filter((c) => String(c.params.path).includes("elsewhere"))).toEqual([]);
  });
});
