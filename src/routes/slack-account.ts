/**
 * A person's own Slack link (API.md "Slack"): a one-use code that `/orc link <code>` redeems in Slack, whether a Slack
 * user is linked, and unlinking.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { slackLinkCodes, slackLinks } from "../db/schema";
import type { HubEnv } from "../http/context";
import { Problem } from "../http/problem";
import { currentUser, person } from "../middleware/guards";
import { documented } from "../openapi/operation";
import { timestamp } from "../views/fields";

/** How long a link code works. */
export const SLACK_LINK_CODE_MS = 10 * 60 * 1000;

export const slackAccountRoutes = new Hono<HubEnv>();

const linkCode = z.object({
  code: z.string().meta({ description: "One use, for `/orc link <code>` in Slack" }),
  expires_at: timestamp.meta({ description: "Ten minutes from now" }),
  command: z.string().meta({ description: "The command to type in Slack, with the code" }),
});

const slackLink = z.object({
  linked: z.boolean(),
  team_id: z.string().nullable().meta({ description: "The workspace of the linked Slack user" }),
  slack_user_id: z.string().nullable(),
  linked_at: timestamp.nullable(),
});

slackAccountRoutes.post(
  "/me/slack-link",
  documented({
    id: "createSlackLinkCode",
    tag: "Auth",
    summary: "Create a Slack link code",
    description:
      "A one-use code to link the caller's Slack user.\n\n" +
      "Typing `/orc link <code>` in Slack within ten minutes links the Slack user who typed it to the caller; a Slack user linked before is replaced. " +
      "503 `NOT_CONFIGURED` until the Slack app is installed in a workspace.",
    caller: "person",
    responses: { 201: linkCode },
  }),
  person(),
  async (c) => {
    const installed = await c.env.DB.prepare("SELECT 1 AS one FROM slack_installations LIMIT 1").first();
    if (!installed) throw new Problem(503, "NOT_CONFIGURED", "Slack is not set up: an admin has to install the Slack app first");
    const code = randomSecret();
    const expiresAt = new Date(Date.now() + SLACK_LINK_CODE_MS).toISOString();
    await c.var.db.insert(slackLinkCodes).values({ codeHash: await sha256Hex(code), userId: currentUser(c).id, expiresAt });
    // The code links a Slack user to the account: an idempotent answer keeps it sealed, like the table keeps its hash.
    c.set("secretResponse", "sealed");
    return c.json({ code, expires_at: expiresAt, command: `/orc link ${code}` }, 201);
  },
);

slackAccountRoutes.get(
  "/me/slack",
  documented({
    id: "getSlackLink",
    tag: "Auth",
    summary: "Get the Slack link",
    description: "Whether a Slack user is linked to the caller, and which.",
    caller: "person",
    responses: { 200: slackLink },
  }),
  person(),
  async (c) => {
    const link = await c.var.db.query.slackLinks.findFirst({ where: eq(slackLinks.userId, currentUser(c).id) });
    return c.json({ linked: Boolean(link), team_id: link?.teamId ?? null, slack_user_id: link?.slackUserId ?? null, linked_at: link?.createdAt ?? null });
  },
);

slackAccountRoutes.delete(
  "/me/slack",
  documented({
    id: "unlinkSlack",
    tag: "Auth",
    summary: "Unlink the caller's Slack user",
    description: "What that Slack user does afterwards is refused until they link again. Unlinking when nobody is linked is a 204 too.",
    caller: "person",
    responses: { 204: { description: "Unlinked" } },
  }),
  person(),
  async (c) => {
    await c.var.db.delete(slackLinks).where(eq(slackLinks.userId, currentUser(c).id));
    return c.body(null, 204);
  },
);
