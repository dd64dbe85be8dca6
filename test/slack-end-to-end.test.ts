/**
 * Slack end to end, as a workspace uses it: the admin installs the app with a bot token and gives a project a channel
 * (through the hub's routes), a member links their Slack user, an agent's approval and question are posted to the
 * channel, and the member answers them from the posted message's own buttons (the question through its modal): the
 * task resumes and the message is updated in place saying by whom. Only Slack is faked (test/slack-api-setup.ts).
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAdmin, call, until } from "./helpers";
import { slackCalls } from "./slack";
import type { SlackCall } from "./slack-api-setup";
import { click, linkSlack, submit, type SlackUser } from "./slack-people";
import { cli, expectOk, T, taskStatus, worldUnder, type World } from "./task-world";

let admin: string;
const unique = () => crypto.randomUUID().replace(/-/g, "").slice(0, 10).toUpperCase();

beforeAll(async () => {
  admin = await bootstrapAdmin();
});

/** A project posting to a channel of a newly installed workspace, and its member linked there as a Slack user. */
async function slackWorld(): Promise<{ w: World; who: SlackUser & { channel: string } }> {
  const w = await worldUnder(admin, `Slack e2e ${unique()}`);
  const team = `T${unique()}`;
  const channel = `C${unique()}`;
  await expectOk(call("/api/v1/slack/installations", { token: admin, body: { team_id: team, bot_token: `xoxb-${team}-e2e` } }), 201);
  await expectOk(
    call(`/api/v1/projects/${w.project.id}/slack-channels`, {
      token: w.member.token,
      body: { channel_id: channel, team_id: team, events: ["intervention_requested"] },
    }),
    201,
  );
  const who = { team, user: `U${unique()}`, channel } satisfies SlackUser;
  await linkSlack(w.member.token, who);
  return { w, who };
}

async function runningTask(w: World, title: string) {
  const { json } = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${json.id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${json.id}/start`, {}));
  return json.id as string;
}

const inChannel = async (channel: string, method: string) => (await slackCalls(method)).filter((c) => c.params.channel === channel);
const buttons = (c: SlackCall): { action_id: string; value: string; text: { text: string } }[] =>
  (c.params.blocks as any[]).find((b) => b.type === "actions")?.elements ?? [];
const words = (c: SlackCall) => (c.params.blocks as any[]).map((b) => b.text?.text ?? (b.elements ?? []).map((e: any) => e.text ?? "").join(" ")).join("\n");

/** The message posted in the channel whose buttons include one labelled `label`. */
const postedWith = (channel: string, label: string) =>
  until(
    () => inChannel(channel, "chat.postMessage"),
    (calls) => calls.some((c) => buttons(c).some((b) => b.text.text === label)),
    `a message with ${label}`,
  ).then((calls) => calls.find((c) => buttons(c).some((b) => b.text.text === label))!);

/** The update of the message posted at `ts`, once it has come. */
const updateOf = (channel: string, ts: string) =>
  until(
    () => inChannel(channel, "chat.update"),
    (calls) => calls.some((c) => c.params.ts === ts),
    "the message's update",
  ).then((calls) => calls.filter((c) => c.params.ts === ts));

/** The ts of the message the lane recorded for a subject (`iv:<intervention>`). */
const postOf = (who: SlackUser, subject: string) =>
  env.DB.prepare("SELECT ts FROM slack_posts WHERE team_id = ?1 AND channel_id = ?2 AND subject = ?3")
    .bind(who.team, who.channel, subject)
    .first<{ ts: string }>()
    .then((p) => p!.ts);

describe("answering from a channel's messages", () => {
  it("an approval posted to the channel is answered by its Approve button: the task resumes and the message says by whom", async () => {
    const { w, who } = await slackWorld();
    const taskId = await runningTask(w, "Release 4.2");
    const { json } = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question: "Tag and push 4.2?", intervention_type: "approval" }));
    const message = await postedWith(who.channel, "Approve");
    expect(words(message)).toContain("Tag and push 4.2?");
    const approve = buttons(message).find((b) => b.text.text === "Approve")!;
    expect(await taskStatus(w, taskId)).toBe("needs_human");

    const { res } = await click(who, approve.value);
    expect(res.status).toBe(200);
    expect(await taskStatus(w, taskId)).toBe("running");
    const iv = await env.DB.prepare("SELECT status, response, responded_by FROM interventions WHERE id = ?1").bind(json.intervention_id).first();
    expect(iv).toEqual({ status: "responded", response: "approved", responded_by: w.member.email });

    // The lane recorded the ts Slack gave the post, and updates that very message.
    const [update] = await updateOf(who.channel, await postOf(who, `iv:${json.intervention_id}`));
    expect(buttons(update!)).toEqual([]);
    expect(words(update!)).toContain(`Answered by ${w.member.email}: approved`);
  });

  it("a question in words is answered through the modal its Answer button opens: the task resumes and the message updates", async () => {
    const { w, who } = await slackWorld();
    const taskId = await runningTask(w, "Pick a region");
    const { json } = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question: "Which region should the cluster use?" }));
    const message = await postedWith(who.channel, "Answer");
    const answer = buttons(message).find((b) => b.text.text === "Answer")!;

    const { res, name } = await click(who, answer.value);
    expect(res.status).toBe(200);
    const opened = await until(
      () => slackCalls("views.open"),
      (calls) => calls.some((c) => c.params.trigger_id === `trig.${name}`),
      "the answer modal",
    ).then((calls) => calls.find((c) => c.params.trigger_id === `trig.${name}`)!);
    expect(opened.token).toBe(`xoxb-${who.team}-e2e`);
    const view = opened.params.view as { callback_id: string; blocks: { block_id: string }[] };
    expect(view.callback_id).toBe(`answer:${json.intervention_id}`);
    expect(view.blocks.map((b) => b.block_id)).toContain("text");
    expect(await taskStatus(w, taskId)).toBe("needs_human");

    const submitted = await submit(who, view.callback_id, "eu-central-1");
    expect(submitted.status).toBe(200);
    expect(await taskStatus(w, taskId)).toBe("running");
    const [update] = await updateOf(who.channel, await postOf(who, `iv:${json.intervention_id}`));
    expect(buttons(update!)).toEqual([]);
    expect(words(update!)).toContain(`Answered by ${w.member.email}: eu-central-1`);
  });
});
