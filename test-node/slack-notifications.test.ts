/** Slack's Block Kit messages (src/integrations/slack/notifications.ts): escaped, cut to Slack's limits, with the buttons each event asks for. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CHAT_EVENTS, SETTLING_EVENTS } from "../src/domain/chat-events";
import {
  escapedCut,
  MAX_BLOCKS,
  MAX_BUTTON_TEXT,
  MAX_SECTION,
  notification,
  settled,
  settledSubject,
  settlement,
  type SlackContext,
  type SlackMessage,
} from "../src/integrations/slack/notifications";

const TASK = "6f1c2a34-1111-4222-8333-444455556666";
const IV = "0a1b2c3d-aaaa-4bbb-8ccc-dddddddddddd";
const ctx: SlackContext = { projectName: "Web & <API>", taskTitle: "Fix <b>bold</b> & more", taskUrl: `https://hub.test/projects/p1/tasks/${TASK}` };

const event = (type: string, data: Record<string, unknown> = {}, task_id: string | null = TASK) => ({ type, task_id, data });
const buttons = (m: SlackMessage | null) => m!.buttons.map((b) => [b.text.text, b.action_id, b.value]);
const texts = (m: SlackMessage) =>
  m.blocks.flatMap((b: any) => [b.text?.text, ...(b.elements ?? []).map((e: any) => (e.type === "mrkdwn" ? e.text : undefined))]).filter(Boolean) as string[];

/** Every mrkdwn text of a message: within Slack's limit, and no `<` or `>` but the link's own. */
function expectWithinLimits(m: SlackMessage) {
  expect(m.blocks.length).toBeLessThanOrEqual(MAX_BLOCKS);
  for (const text of texts(m)) {
    expect(text.length).toBeLessThanOrEqual(MAX_SECTION);
    expect(text.replace(/<https:\/\/hub\.test\/[^|>]+\|[^<>]*>/g, "")).not.toMatch(/[<>]/);
    // Nothing half-escaped: every & starts an entity.
    expect(text).not.toMatch(/&(?!amp;|lt;|gt;)/);
  }
  for (const b of m.buttons) expect(b.text.text.length).toBeLessThanOrEqual(MAX_BUTTON_TEXT);
}

describe("a channel's messages", () => {
  it("asks for an approval with Approve and Deny, escaped, with the project and the task linking to the dashboard", () => {
    const m = notification(event("intervention_requested", { intervention_id: IV, intervention_type: "approval", question: "Ship <it> & go?" }), ctx)!;
    expect(buttons(m)).toEqual([
      ["Approve", `iv:${IV}:y`, `iv:${IV}:y`],
      ["Deny", `iv:${IV}:n`, `iv:${IV}:n`],
    ]);
    expect(m.subject).toBe(`iv:${IV}`);
    expect(texts(m)).toEqual([
      "*Approval needed*",
      "Ship &lt;it&gt; &amp; go?",
      `Web &amp; &lt;API&gt; · <https://hub.test/projects/p1/tasks/${TASK}|Fix &lt;b&gt;bold&lt;/b&gt; &amp; more>`,
    ]);
    expect(m.text).toBe("Approval needed · Web &amp; &lt;API&gt; · Fix &lt;b&gt;bold&lt;/b&gt; &amp; more");
  });

  it("offers a question's options as buttons, and an Answer for one answered in words", () => {
    const q = event("intervention_requested", { intervention_id: IV, intervention_type: "question", question: "Which?" });
    expect(buttons(notification(q, { ...ctx, options: ["eu", { label: "us" }] }))).toEqual([
      ["eu", `iv:${IV}:0`, `iv:${IV}:0`],
      ["us", `iv:${IV}:1`, `iv:${IV}:1`],
    ]);
    expect(buttons(notification(q, ctx))).toEqual([["Answer", `it:${IV}`, `it:${IV}`]]);
    const long = notification(q, { ...ctx, options: ["x".repeat(200)] })!;
    expect(long.buttons[0]!.text.text).toBe(`${"x".repeat(MAX_BUTTON_TEXT - 1)}…`);
  });

  it("gives each event that asks for something its buttons and subject, and the others none", () => {
    expect(buttons(notification(event("task_awaiting_approval", { created_by: "agent:x" }), ctx))).toEqual([["Approve", `ap:${TASK}`, `ap:${TASK}`]]);
    const plan = notification(event("plan_submitted"), { ...ctx, plan: { steps: ["a <b>"] } })!;
    expect(buttons(plan)).toEqual([
      ["Approve plan", `pa:${TASK}`, `pa:${TASK}`],
      ["Ask for changes", `pr:${TASK}`, `pr:${TASK}`],
    ]);
    expect(texts(plan)[1]).toMatch(/^```\{\n {2}"steps": \[\n {4}"a &lt;b&gt;"\n {2}\]\n\}```$/);
    expect(plan.subject).toBe(`plan:${TASK}`);
    const failed = notification(event("task_failed", { error: "boom" }), ctx)!;
    expect([buttons(failed), failed.subject]).toEqual([[["Retry", `rt:${TASK}`, `rt:${TASK}`]], `fail:${TASK}`]);
    for (const quiet of [
      event("task_completed", { summary: "ok" }),
      event("budget_held", { scope: "project", period: "day", limit_usd: 10, spent: { cost_usd: 8 } }, null),
      event("task_unassignable", { reason: "none", servers: [{ server_name: "s1", reason: "busy" }] }),
      event("server_offline", { server_name: "box" }, null),
    ]) {
      const m = notification(quiet, ctx)!;
      expect([m.buttons, m.subject, m.blocks.some((b) => b.type === "actions")]).toEqual([[], null, false]);
    }
  });

  it("says nothing of what is asked of a person by a question anyway, or of events it does not speak of", () => {
    expect(notification(event("task_stalled", { action: "needs_human" }), ctx)).toBeNull();
    expect(notification(event("review_exhausted", { action: "needs_human" }), ctx)).toBeNull();
    expect(notification(event("task_started"), ctx)).toBeNull();
  });

  it("has a message for every chat event", () => {
    const data = { intervention_id: IV, question: "q", error: "e", summary: "s", reason: "r", score: 40, round: 1, max_retries: 2, fix_requested: true };
    for (const type of CHAT_EVENTS) expect(notification(event(type, data), ctx), type).not.toBeNull();
  });

  it("stays within Slack's limits whatever it quotes, cutting after escaping and never inside an entity or a surrogate pair", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 5000 }),
        fc.string({ maxLength: 400 }),
        fc.constantFrom("&", "<", ">", "😀", "a"),
        (text, title, pad) => {
          const padded = pad.repeat(1200) + text;
          for (const e of [
            event("intervention_requested", { intervention_id: IV, intervention_type: "approval", question: padded }),
            event("task_failed", { error: padded }),
            event("task_unassignable", { reason: padded }),
          ]) {
            const m = notification(e, { ...ctx, projectName: title, taskTitle: padded, options: [padded] })!;
            expectWithinLimits(m);
            for (const t of texts(m)) expect(t.isWellFormed()).toBe(true);
          }
          const cut = escapedCut(padded, 100);
          expect(cut.length).toBeLessThanOrEqual(100);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("a message settled", () => {
  it("names the message each settling event settles", () => {
    const subjects = SETTLING_EVENTS.map((type) => settledSubject(event(type, { intervention_id: IV })));
    expect(subjects).toEqual([`iv:${IV}`, `iv:${IV}`, `ap:${TASK}`, `plan:${TASK}`, `plan:${TASK}`, `fail:${TASK}`, `fail:${TASK}`]);
    expect(settledSubject(event("task_started"))).toBeNull();
  });

  it("keeps the message's words, drops its buttons and says who settled it and how", () => {
    const original = notification(event("intervention_requested", { intervention_id: IV, intervention_type: "approval", question: "Go?" }), ctx)!;
    const after = settled(original, settlement(event("intervention_responded", { intervention_id: IV, response: "<approved>" }), "ann@example.com"));
    expect(after.buttons).toEqual([]);
    expect(after.blocks.some((b) => b.type === "actions")).toBe(false);
    expect(texts(after)).toEqual([...texts(original), "Answered by ann@example.com: &lt;approved&gt;"]);
    expect(settlement(event("intervention_timed_out", { intervention_id: IV }), null)).toBe("Timed out");
    expect(settlement(event("task_approved"), "bo@x")).toBe("Approved by bo@x");
    expect(settlement(event("plan_revision_requested", { feedback: "smaller" }), "bo@x")).toBe("Changes asked by bo@x: smaller");
    expect(settlement(event("task_cancelled"), "bo@x")).toBe("Task cancelled by bo@x");
    expect(settlement(event("task_failed"), null)).toBe("Task failed");
    expect(settlement(event("task_completed"), null)).toBe("Task done");
    expect(settlement(event("task_retried"), "bo@x")).toBe("Retried by bo@x");
  });
});
