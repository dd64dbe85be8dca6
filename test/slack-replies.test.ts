/** What `/orc` reads and answers, the modals, which response URLs are Slack's (pure), and a door without its secret. */
import { env } from "cloudflare:test";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { HubEnv } from "../src/http/context";
import type { Problem } from "../src/http/problem";
import { signedSlackBody } from "../src/integrations/slack/doors-body";
import { openTaskReply, taskReply } from "../src/integrations/slack/command-replies";
import { escapeMrkdwn } from "../src/integrations/slack/notifications";
import { parseOrc } from "../src/integrations/slack/commands";
import { answerModal, changesModal, submittedFor } from "../src/integrations/slack/modals";
import { responseUrlAllowed } from "../src/integrations/slack/response-url";

const ID = "0f8fad5b-d9cb-469f-a165-70867728950e";

describe("/orc's sub-commands", () => {
  it("reads the sub-command and what follows; anything else is help", () => {
    expect(parseOrc("  TASK  1a2b3c4d ")).toEqual({ sub: "task", rest: "1a2b3c4d" });
    expect(parseOrc('run "Nightly triage" area=x')).toEqual({ sub: "run", rest: '"Nightly triage" area=x' });
    expect(parseOrc("mute")).toEqual({ sub: "mute", rest: "" });
    // Slack sends what was typed with &, < and > as entities.
    expect(parseOrc('run t note="a &amp; b" x=&lt;y&gt; z=&amp;lt;')).toEqual({ sub: "run", rest: 't note="a & b" x=<y> z=&lt;' });
    expect(parseOrc("watch R&amp;D")).toEqual({ sub: "watch", rest: "R&D" });
    expect(parseOrc("")).toEqual({ sub: "help", rest: "" });
    expect(parseOrc("deploy everything")).toEqual({ sub: "help", rest: "" });
  });
});

describe("mrkdwn from elsewhere", () => {
  it("escapes what Slack reads as markup, and cuts long names between code points", () => {
    expect(escapeMrkdwn("<!channel> & <https://x|y>")).toBe("&lt;!channel&gt; &amp; &lt;https://x|y&gt;");
    const reply = openTaskReply(
      [
        { id: ID, title: `${"a".repeat(79)}😀 <b>`, status: "running", project: "P & Q", awaiting_approval: 0 },
        { id: ID, title: "Ask", status: "needs_human", project: "P", awaiting_approval: 0 },
      ],
      5,
      "your projects",
    );
    const text = reply.blocks!.map((b: any) => b.text.text).join("\n");
    expect(text).toContain(`*Needs a person*\n\`0f8fad5b\` Ask · _needs_human_ · P`);
    expect(text).toContain(`${"a".repeat(79)}… · _running_ · P &amp; Q`);
    expect(text).toContain("…and 3 more open tasks");
    const one = taskReply(
      { id: ID, title: "T>", status: "failed", priority: "high", project: "P", server: "box<1>", outcome: "line 1\nline <2>" },
      "https://hub/x",
    );
    expect((one.blocks![0] as any).text.text).toBe(`*<https://hub/x|T&gt;>*\nP · failed · high · on box&lt;1&gt;\n\`${ID}\`\n\n>line 1\n>line &lt;2&gt;`);
  });
});

describe("Slack's limits", () => {
  const amps = (n: number) => "&<".repeat(n);
  const sectionTexts = (blocks: any[]) => blocks.filter((b) => b.type === "section").map((b) => b.text.text as string);
  it("hold for text that grows when escaped: every section of a reply and a modal stays within 3,000 characters", () => {
    const many = Array.from({ length: 20 }, () => ({ id: ID, title: amps(200), status: "needs_human", project: amps(200), awaiting_approval: 0 }));
    const list = sectionTexts(openTaskReply(many, 20, "your projects").blocks!);
    expect(list.length).toBeGreaterThan(2);
    for (const text of list) expect(text.length).toBeLessThanOrEqual(3000);
    const one = taskReply(
      { id: ID, title: amps(500), status: "failed", priority: "high", project: amps(500), server: amps(500), outcome: `${amps(2000)}\n`.repeat(3) },
      "https://hub/x",
    );
    for (const text of sectionTexts(one.blocks!)) expect(text.length).toBeLessThanOrEqual(3000);
    const modal = answerModal({ id: ID, question: `${amps(10)}\n`.repeat(400), taskTitle: amps(300) }, null);
    for (const text of sectionTexts(modal.blocks)) expect(text.length).toBeLessThanOrEqual(3000);
    // Cut after escaping: never half an entity.
    for (const text of [...list, ...sectionTexts(one.blocks!), ...sectionTexts(modal.blocks)]) expect(text).not.toMatch(/&(a|am|l|lt|g|gt)?…/);
  });
});

describe("modals", () => {
  it("name what they are for, keep the message clicked, and read back", () => {
    const answer = answerModal({ id: ID, question: "Which <one>?", taskTitle: null }, { channel: "C1", ts: "1.2" });
    expect(answer).toMatchObject({ callback_id: `answer:${ID}`, private_metadata: '{"channel":"C1","ts":"1.2"}' });
    expect(answer.blocks[1]).toMatchObject({ block_id: "text", element: { action_id: "text", multiline: true } });
    expect(changesModal({ id: ID, title: "T" }, null)).toMatchObject({ callback_id: `changes:${ID}`, private_metadata: "" });
    expect(answer.title.text.length).toBeLessThanOrEqual(24);
    expect(changesModal({ id: ID, title: "T" }, null).title.text.length).toBeLessThanOrEqual(24);
    expect(submittedFor(`answer:${ID}`)).toEqual({ kind: "answer", interventionId: ID });
    expect(submittedFor(`changes:${ID}`)).toEqual({ kind: "changes", taskId: ID });
    expect(submittedFor("other:1")).toBeNull();
  });
});

describe("a response URL", () => {
  const env = { SLACK_API_ROOT: "http://127.0.0.1:9999/api/" };
  it("is Slack's only on hooks.slack.com over https, or at SLACK_API_ROOT's origin", () => {
    expect(responseUrlAllowed({ SLACK_API_ROOT: "" }, "https://hooks.slack.com/commands/T1/2/abc")).toBe(true);
    expect(responseUrlAllowed(env, "http://127.0.0.1:9999/response/x")).toBe(true);
    for (const url of [
      "http://hooks.slack.com/commands/x",
      "https://hooks.slack.com.evil.test/x",
      "https://evil.test/?https://hooks.slack.com",
      "https://user:pw@hooks.slack.com/x",
      "http://127.0.0.1:9998/response/x",
      "http://localhost:9999/response/x",
      "not a url",
    ]) {
      expect(responseUrlAllowed(env, url), url).toBe(false);
    }
  });
});

describe("a door without the signing secret", () => {
  it("is 503 NOT_CONFIGURED before anything is read", async () => {
    const door = new Hono<HubEnv>().post("/", async (c) => {
      try {
        return c.text(await signedSlackBody(c));
      } catch (e) {
        return c.text((e as Problem).code, (e as Problem).status);
      }
    });
    const res = await door.request("/", { method: "POST", body: "text=help" }, { ...env, SLACK_SIGNING_SECRET: "" });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe("NOT_CONFIGURED");
    const configured = await door.request("/", { method: "POST", body: "text=help" }, env);
    expect(configured.status).toBe(401);
  });
});
