/**
 * The doors Slack posts to, end to end against the fake Slack (test/slack-api-setup.ts): every request's signature
 * checked before anything is read into meaning, the app's events, linking by code, and each `/orc` command answered
 * privately through the response URL.
 */
import { env, SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, expectProblem, replyOf } from "./helpers";
import { installTeam, linkSlack, orc, responded, type SlackUser } from "./slack-people";
import { postSigned, responseUrl, SIGNING_SECRET, slackCalls, slackSignature, slashCommand, SLACK_ROOT } from "./slack";
import { createWorld, expectOk, type World } from "./task-world";

const TEAM = "TDOORS";
let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
const ann: SlackUser = { team: TEAM, user: "UANN", channel: "CDOORS1" };
const vic: SlackUser = { team: TEAM, user: "UVIC", channel: "CDOORS1" };

const linkedOf = async (token: string) => (await call("/api/v1/auth/me/slack", { token })).json;
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  w = await createWorld("Slack doors");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  await installTeam(TEAM);
  await linkSlack(w.member.token, ann);
  await linkSlack(viewer.token, vic);
});

describe("a request's signature, checked before the body is read into meaning", () => {
  async function refusedLink(opts: Parameters<typeof postSigned>[2], rule: RegExp) {
    const person = await createUser(w.admin, "member");
    const { json } = await call("/api/v1/auth/me/slack-link", { method: "POST", token: person.token });
    const name = crypto.randomUUID();
    const body = slashCommand(`link ${json.code}`, { team: TEAM, user: `U${name.slice(0, 6).toUpperCase()}` }, responseUrl(name));
    const reply = await replyOf(await postSigned("/slack/commands", body, opts));
    expectProblem(reply, 401, "UNAUTHORIZED");
    expect(reply.json.detail).toMatch(rule);
    // Nothing was done: the code still links, and nothing was said.
    await new Promise((r) => setTimeout(r, 150));
    expect((await slackCalls("response_url")).filter((c) => c.params.path === `/response/${name}`)).toEqual([]);
    expect((await linkedOf(person.token)).linked).toBe(false);
    await orc({ team: TEAM, user: `UOK${name.slice(0, 6).toUpperCase()}` }, `link ${json.code}`);
    expect((await linkedOf(person.token)).linked).toBe(true);
  }

  it("refuses a forged signature", () => refusedLink({ signature: `v0=${"0".repeat(64)}` }, /X-Slack-Signature does not verify/));
  it("refuses a signature under another secret", () => refusedLink({ secret: `${SIGNING_SECRET}-other` }, /X-Slack-Signature does not verify/));
  it("refuses a timestamp six minutes old", () => refusedLink({ timestamp: now() - 6 * 60 }, /X-Slack-Request-Timestamp must be within 5 minutes/));
  it("refuses a timestamp six minutes ahead", () => refusedLink({ timestamp: now() + 6 * 60 }, /X-Slack-Request-Timestamp must be within 5 minutes/));

  it("refuses a request without Slack's headers on every door", async () => {
    for (const door of ["commands", "interactions", "events"]) {
      const reply = await replyOf(await SELF.fetch(`https://hub.test/slack/${door}`, { method: "POST", body: "type=x" }));
      expectProblem(reply, 401, "UNAUTHORIZED");
      expect(reply.json.detail).toContain("X-Slack-Signature and X-Slack-Request-Timestamp are required");
    }
  });

  it("refuses a body over 64 KiB by its length before reading, and while reading one of no declared length", async () => {
    const big = `text=${"a".repeat(70 * 1024)}`;
    expectProblem(await replyOf(await postSigned("/slack/commands", big)), 413, "PAYLOAD_TOO_LARGE");
    const timestamp = now();
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 70; i++) controller.enqueue(new TextEncoder().encode("a".repeat(1024)));
        controller.close();
      },
    });
    const res = await SELF.fetch("https://hub.test/slack/events", {
      method: "POST",
      headers: { "X-Slack-Request-Timestamp": String(timestamp), "X-Slack-Signature": await slackSignature(big, timestamp) },
      body: stream,
    });
    expectProblem(await replyOf(res), 413, "PAYLOAD_TOO_LARGE");
  });

  it("names the field of a signed but malformed request (422)", async () => {
    const missing = await replyOf(await postSigned("/slack/commands", "command=%2Forc&text=help&user_id=U1&channel_id=C1&response_url=x"));
    expectProblem(missing, 422, "VALIDATION_FAILED");
    expect(missing.json.errors.map((e: any) => e.path).sort()).toEqual(["response_url", "team_id"]);
    const notJson = await replyOf(await postSigned("/slack/interactions", "payload=%7Bnot"));
    expectProblem(notJson, 422, "VALIDATION_FAILED");
    expect(notJson.json.errors).toEqual([{ path: "payload", message: "must be JSON" }]);
    const teamless = await replyOf(
      await postSigned(
        "/slack/interactions",
        new URLSearchParams({ payload: JSON.stringify({ type: "block_actions", user: { id: "U1" }, actions: [] }) }).toString(),
      ),
    );
    expectProblem(teamless, 422, "VALIDATION_FAILED");
    expect(teamless.json.errors.map((e: any) => e.path)).toEqual(expect.arrayContaining(["payload.team", "payload.trigger_id", "payload.actions"]));
    const events = await replyOf(await postSigned("/slack/events", "{]", {}, "application/json"));
    expectProblem(events, 422, "VALIDATION_FAILED");
  });
});

describe("the app's events", () => {
  const event = (body: unknown) => postSigned("/slack/events", JSON.stringify(body), {}, "application/json");
  const installed = async (team: string) => Boolean(await env.DB.prepare("SELECT 1 FROM slack_installations WHERE team_id = ?1").bind(team).first());

  it("answers Slack's url_verification with its challenge", async () => {
    const res = await event({ type: "url_verification", token: "t", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
  });

  it("forgets a workspace the app was uninstalled from, or whose bot token was revoked", async () => {
    await installTeam("TGONE1");
    await installTeam("TGONE2");
    expect((await event({ type: "event_callback", team_id: "TGONE1", event: { type: "app_uninstalled" } })).status).toBe(200);
    expect(await installed("TGONE1")).toBe(false);
    // A revoked user token leaves the bot's installation be.
    await event({ type: "event_callback", team_id: "TGONE2", event: { type: "tokens_revoked", tokens: { oauth: ["UX"] } } });
    expect(await installed("TGONE2")).toBe(true);
    await event({ type: "event_callback", team_id: "TGONE2", event: { type: "tokens_revoked", tokens: { bot: ["UBOT"] } } });
    expect(await installed("TGONE2")).toBe(false);
    // Any other event is acknowledged and changes nothing.
    expect((await event({ type: "event_callback", team_id: TEAM, event: { type: "app_mention", text: "hi" } })).status).toBe(200);
    expect(await installed(TEAM)).toBe(true);
  });
});

describe("linking a Slack user", () => {
  it("links by a one-use code, refuses it used again or expired, and moves a link made again", async () => {
    const person = await createUser(w.admin, "member");
    const code = await linkSlack(person.token, { team: TEAM, user: "ULINK1" });
    expect(await linkedOf(person.token)).toMatchObject({ linked: true, team_id: TEAM, slack_user_id: "ULINK1" });
    // Spent: another Slack user cannot use it.
    expect((await orc({ team: TEAM, user: "ULINK2" }, `link ${code}`)).said).toContain("expired or was used already");
    // Expired: refused, and spent all the same.
    const { json } = await call("/api/v1/auth/me/slack-link", { method: "POST", token: person.token });
    await env.DB.prepare("UPDATE slack_link_codes SET expires_at = ?1 WHERE user_id = ?2")
      .bind(new Date(Date.now() - 1000).toISOString(), person.id)
      .run();
    expect((await orc({ team: TEAM, user: "ULINK2" }, `link ${json.code}`)).said).toContain("expired or was used already");
    expect((await linkedOf(person.token)).slack_user_id).toBe("ULINK1");
    // Linking again from another Slack user moves the link; that Slack user linking another person moves it too.
    await linkSlack(person.token, { team: TEAM, user: "ULINK2" });
    expect((await linkedOf(person.token)).slack_user_id).toBe("ULINK2");
    const other = await createUser(w.admin, "member");
    await linkSlack(other.token, { team: TEAM, user: "ULINK2" });
    expect((await linkedOf(person.token)).linked).toBe(false);
    expect((await linkedOf(other.token)).slack_user_id).toBe("ULINK2");
  });

  it("tells an unlinked Slack user how to link, for all but help and link", async () => {
    for (const text of ["tasks", "task 1234", "watch x", "mute", "run x"]) {
      const { said } = await orc({ team: TEAM, user: "UNOBODY" }, text);
      expect(said).toContain("not linked");
      expect(said).toContain("*Link Slack*");
      expect(said).toContain("/orc link &lt;code&gt;");
    }
    expect((await orc({ team: TEAM, user: "UNOBODY" }, "help")).said).toContain("/orc tasks");
  });
});

describe("a response URL", () => {
  it("is posted to only when it is Slack's", async () => {
    const port = new URL(SLACK_ROOT).port;
    for (const url of [`http://localhost:${port}/response/elsewhere-1`, "https://hooks.slack.com.evil.test/response/elsewhere-2", "http://hooks.slack.com/x"]) {
      const reply = await replyOf(await postSigned("/slack/commands", slashCommand("help", ann, url)));
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors).toEqual([{ path: "response_url", message: expect.stringContaining("hooks.slack.com") }]);
    }
    await orc(ann, "help");
    expect((await slackCalls("response_url")).filter((c) => String(c.params.path).includes("elsewhere"))).toEqual([]);
  });
});

describe("/orc", () => {
  it("help, and anything unknown, lists the commands", async () => {
    for (const text of ["help", "", "frobnicate now"]) {
      const { said } = await orc(ann, text);
      for (const command of ["/orc tasks", "/orc task &lt;id prefix&gt;", "/orc watch", "/orc mute", "/orc run &lt;template&gt;", "/orc link"]) {
        expect(said).toContain(command);
      }
    }
  });

  it("tasks lists the person's open tasks, those of this channel's projects when it posts some, never another project's", async () => {
    const other = await createProject(w.admin, `Other ${crypto.randomUUID().slice(0, 4)}`);
    const second = await createProject(w.admin, `Second ${crypto.randomUUID().slice(0, 4)}`);
    await addMember(w.admin, second.id, w.member.id);
    const made = async (projectId: string, title: string) =>
      (await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title, project_id: projectId } }), 201)).json.id as string;
    const mine = await made(w.project.id, `Mine <b> & ${crypto.randomUUID().slice(0, 4)}`);
    const secondTask = await made(second.id, `Second's ${crypto.randomUUID().slice(0, 4)}`);
    const hidden = await made(other.id, `Hidden ${crypto.randomUUID().slice(0, 4)}`);

    const everywhere = (await orc({ ...ann, channel: "CTASKS1" }, "tasks")).said;
    expect(everywhere).toContain("Open tasks in your projects");
    expect(everywhere).toContain(`\`${mine.slice(0, 8)}\` Mine &lt;b&gt; &amp; `);
    expect(everywhere).toContain(`\`${secondTask.slice(0, 8)}\``);
    expect(everywhere).not.toContain(hidden.slice(0, 8));

    expect((await orc({ ...ann, channel: "CTASKS2" }, `watch ${second.name}`)).said).toContain("now posts");
    const here = (await orc({ ...ann, channel: "CTASKS2" }, "tasks")).said;
    expect(here).toContain("Open tasks in the projects this channel posts");
    expect(here).toContain(`\`${secondTask.slice(0, 8)}\``);
    expect(here).not.toContain(mine.slice(0, 8));
    expect(here).not.toContain(hidden.slice(0, 8));
  });

  it("task <prefix> shows one task the person can see, with a link to it", async () => {
    const id = (await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "Look <here>", project_id: w.project.id, priority: "high" } }), 201)).json
      .id as string;
    const { answer, said } = await orc(ann, `task ${id.slice(0, 8)}`);
    expect(said).toContain(`*<https://hub.test/projects/${w.project.id}/tasks/${id}|Look &lt;here&gt;>*`);
    expect(said).toContain(`${w.project.name} · pending · high`);
    expect(said).toContain(`\`${id}\``);
    expect(answer.text).toBe("Look <here> (pending)");
    const other = await createProject(w.admin, `Unseen ${crypto.randomUUID().slice(0, 4)}`);
    const unseen = (await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "Unseen", project_id: other.id } }), 201)).json.id as string;
    expect((await orc(ann, `task ${unseen.slice(0, 8)}`)).said).toContain("No task of yours starts with that");
  });

  it("watch makes this channel post a project, and again stops it; a viewer may not", async () => {
    const rows = () =>
      env.DB.prepare("SELECT project_id, team_id, events, muted, created_by FROM slack_channels WHERE team_id = ?1 AND channel_id = 'CWATCH'")
        .bind(TEAM)
        .all()
        .then((r) => r.results);
    const here = { ...ann, channel: "CWATCH" };
    expect((await orc({ ...vic, channel: "CWATCH" }, `watch ${w.project.name}`)).said).toContain("Viewers can only read");
    expect(await rows()).toEqual([]);
    expect((await orc(here, `watch ${w.project.name.toLowerCase()}`)).said).toContain(`This channel now posts *${w.project.name}*`);
    expect(await rows()).toEqual([{ project_id: w.project.id, team_id: TEAM, events: null, muted: 0, created_by: w.member.id }]);
    expect((await orc(here, `watch ${w.project.name}`)).said).toContain("no longer posts");
    expect(await rows()).toEqual([]);
    expect((await orc(here, "watch no-such-project")).said).toContain("Which project?");
    // A channel the app cannot see is refused, not recorded to be dropped later.
    expect((await orc({ ...ann, channel: "CNONEWATCH" }, `watch ${w.project.name}`)).said).toContain("the app sees no such channel");
    expect(await env.DB.prepare("SELECT 1 FROM slack_channels WHERE channel_id = 'CNONEWATCH'").first()).toBeNull();
  });

  it("a workspace the app is not installed in is told so, and its link code is not spent", async () => {
    const { json } = await call("/api/v1/auth/me/slack-link", { method: "POST", token: w.member.token });
    const stranger = { team: "TNOTINSTALLED", user: "USTRANGER", channel: "CX" };
    expect((await orc(stranger, `link ${json.code}`)).said).toContain("not installed in this workspace");
    expect((await orc(stranger, "tasks")).said).toContain("not installed in this workspace");
    expect(await env.DB.prepare("SELECT 1 FROM slack_links WHERE team_id = 'TNOTINSTALLED'").first()).toBeNull();
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM slack_link_codes WHERE user_id = ?1").bind(w.member.id).first("n")).toBeGreaterThan(0);
  });

  it("mute stops this channel's projects posting, and again lets them post, saying which", async () => {
    const here = { ...ann, channel: "CMUTE" };
    const muted = () =>
      env.DB.prepare("SELECT muted FROM slack_channels WHERE team_id = ?1 AND channel_id = 'CMUTE'")
        .bind(TEAM)
        .all<{ muted: number }>()
        .then((r) => r.results.map((x) => x.muted));
    expect((await orc(here, "mute")).said).toContain("posts no project");
    await orc(here, `watch ${w.project.name}`);
    expect((await orc({ ...vic, channel: "CMUTE" }, "mute")).said).toContain("Viewers can only read");
    expect(await muted()).toEqual([0]);
    expect((await orc(here, "mute")).said).toContain(`Muted: this channel posts nothing of *${w.project.name}*`);
    expect(await muted()).toEqual([1]);
    expect((await orc(here, "mute")).said).toContain(`This channel posts *${w.project.name}* again`);
    expect(await muted()).toEqual([0]);
  });

  it("run starts a template's graph as the person, with source slack, and says why when it cannot", async () => {
    const name = `Slack triage ${crypto.randomUUID().slice(0, 4)}`;
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
            tasks: [{ key: "triage", title: "Triage {{area}} (top {{limit}})" }],
          },
        }),
        201,
      )
    ).json;
    const runs = async () => (await expectOk(call(`/api/v1/projects/${w.project.id}/runs?template_id=${template.id}`, { token: w.admin }))).json.runs;
    expect((await orc(ann, `run "${name.toLowerCase()}" area="login <page>" limit=3`)).said).toContain(`Started *${name}* in ${w.project.name}: 1 task(s)`);
    const [run] = await runs();
    expect(run).toMatchObject({ source: "slack", parameters: { area: "login <page>", limit: 3 }, created_by: w.member.email });
    expect((await call(`/api/v1/tasks/${run.task_ids[0]}`, { token: w.admin })).json.title).toBe("Triage login <page> (top 3)");

    expect((await orc(ann, `run "${name}" limit=many area=x`)).said).toContain("parameters.limit: must be a number");
    expect((await orc(ann, `run "${name}" area`)).said).toContain("is not name=value: /orc run &lt;template&gt;");
    expect((await orc(ann, "run no-such-<template>")).said).toContain("No template named “no-such-&lt;template&gt;”");
    expect((await orc(vic, `run "${name}" area=x`)).said).toContain("Viewers can only read this project");
    expect(await runs()).toHaveLength(1);
  });
});

describe("what was posted", () => {
  it("answers each command once, privately", async () => {
    const name = crypto.randomUUID();
    await postSigned("/slack/commands", slashCommand("help", ann, responseUrl(name)));
    const answer = await responded(name);
    expect(answer).toMatchObject({ response_type: "ephemeral", replace_original: false });
  });
});
