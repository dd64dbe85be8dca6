/**
 * Telegram (API.md "Telegram"): the bot's webhook, its setup by an admin, and
 * linking a person's chat with a one-time code.
 */
import { eq } from "drizzle-orm";
import { Api, webhookCallback } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { Hono } from "hono";
import { currentUser, person } from "../middleware/guards";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { nowIso } from "../db/client";
import { telegramBot, telegramLinkCodes, telegramLinks } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { Problem, unauthorized } from "../http/problem";
import { readJson } from "../http/body";
import { documented } from "../openapi/operation";
import { timestamp } from "../views/fields";
import { z } from "zod";
import { apiRootOf } from "../integrations/telegram/api-root";
import { botFor } from "../integrations/telegram/bot";
import { forgetLinks } from "../integrations/telegram/people";

/** How long a link code works. */
const LINK_CODE_MS = 10 * 60 * 1000;

const notConfigured = (what: string) => new Problem(503, "NOT_CONFIGURED", `Telegram is not set up: ${what}`);

/** The bot as Telegram described it at setup; kept per isolate, so no update asks again. */
let known: { info: UserFromGetMe; at: number } | null = null;
const KNOWN_FOR_MS = 60_000;

async function botInfo(c: HubContext): Promise<UserFromGetMe | null> {
  if (known && Date.now() - known.at < KNOWN_FOR_MS) return known.info;
  const row = await c.var.db.query.telegramBot.findFirst({ where: eq(telegramBot.id, 1) });
  known = row ? { info: row.botInfo as unknown as UserFromGetMe, at: Date.now() } : null;
  return known?.info ?? null;
}

/** `POST /telegram/webhook`: Telegram's updates, checked by the secret it sends back. */
export const telegramWebhookRoutes = new Hono<HubEnv>();

/** What the hub reads of an update before the bot does; the rest of Telegram's Update object is the bot's to read. */
const telegramUpdate = z.looseObject({ update_id: z.int("must be an integer") }).meta({
  description: "A Telegram [Update](https://core.telegram.org/bots/api#update); the bot acts on `message` and `callback_query`",
});

telegramWebhookRoutes.post(
  "/webhook",
  documented({
    id: "receiveTelegramUpdate",
    tag: "Telegram",
    summary: "Telegram's updates for the bot",
    description:
      "Called by Telegram, with the secret registered at setup in `X-Telegram-Bot-Api-Secret-Token` (401 without it). " +
      "Commands and button presses act as the person whose chat is linked, with their role. 503 `NOT_CONFIGURED` until the bot is set up.",
    caller: "telegram",
    body: telegramUpdate,
    responses: { 200: { description: "The update was handled (an empty body)" } },
  }),
  async (c) => {
    const info = await botInfo(c);
    if (!c.env.TELEGRAM_BOT_TOKEN || !c.env.TELEGRAM_WEBHOOK_SECRET || !info) throw notConfigured("POST /api/v1/telegram/setup first");
    // Refused here as a problem like every other 401 (the bot's own check answers with an empty body); digests compare in constant time.
    const presented = c.req.header("X-Telegram-Bot-Api-Secret-Token") ?? "";
    if ((await sha256Hex(presented)) !== (await sha256Hex(c.env.TELEGRAM_WEBHOOK_SECRET))) {
      throw unauthorized("Updates carry the webhook's secret in X-Telegram-Bot-Api-Secret-Token");
    }
    // Read once and checked here, so a malformed update is a 400/422 rather than a failure inside the bot; the bot reads the same parsed body.
    await readJson(c, telegramUpdate);
    const handle = webhookCallback(botFor(c.env, info), "hono", { secretToken: c.env.TELEGRAM_WEBHOOK_SECRET });
    return handle(c);
  },
);

/** `POST /api/v1/telegram/setup` (admin): asks Telegram who the bot is and points its webhook here. */
export const telegramSetupRoutes = new Hono<HubEnv>();

telegramSetupRoutes.post(
  "/setup",
  documented({
    id: "setUpTelegram",
    tag: "Telegram",
    summary: "Set up Telegram",
    description:
      "Set up the Telegram bot (admins).\n\n" +
      "Asks Telegram who the bot is (`TELEGRAM_BOT_TOKEN`) and points its webhook at this hub's `/telegram/webhook` with `TELEGRAM_WEBHOOK_SECRET`. " +
      "Run it again after changing either. 503 `NOT_CONFIGURED` when a secret is missing; 502 `TELEGRAM_REFUSED` when Telegram refuses.",
    caller: "person",
    responses: {
      200: z.object({ bot_username: z.string(), webhook_url: z.string().meta({ format: "uri", description: "Where Telegram now sends updates" }) }),
    },
  }),
  person("admin"),
  async (c) => {
    if (!c.env.TELEGRAM_BOT_TOKEN || !c.env.TELEGRAM_WEBHOOK_SECRET) throw notConfigured("set the TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET secrets");
    const api = new Api(c.env.TELEGRAM_BOT_TOKEN, { apiRoot: apiRootOf(c.env) });
    const webhookUrl = `${hubBaseUrl(c)}/telegram/webhook`;
    let info: UserFromGetMe;
    try {
      info = await api.getMe();
      await api.setWebhook(webhookUrl, { secret_token: c.env.TELEGRAM_WEBHOOK_SECRET, allowed_updates: ["message", "callback_query"] });
    } catch (e) {
      throw new Problem(502, "TELEGRAM_REFUSED", `Telegram refused the setup: ${e instanceof Error ? e.message : String(e)}`);
    }
    const row = { id: 1, botInfo: info as unknown as Record<string, unknown>, webhookUrl, updatedAt: nowIso() };
    await c.var.db.insert(telegramBot).values(row).onConflictDoUpdate({ target: telegramBot.id, set: row });
    known = { info, at: Date.now() };
    return c.json({ bot_username: info.username, webhook_url: webhookUrl });
  },
);

/** A person's own link: a one-time code for the bot's deep link, and unlinking. */
export const telegramAccountRoutes = new Hono<HubEnv>();

const linkCode = z.object({
  code: z.string().meta({ description: "One-time, for `/start <code>` in a chat with the bot" }),
  expires_at: timestamp.meta({ description: "Ten minutes from now" }),
  deep_link: z.string().meta({ format: "uri", description: "`https://t.me/<bot>?start=<code>`: opens the chat with the code ready to send" }),
});

const telegramLink = z.object({
  linked: z.boolean(),
  muted: z.boolean().meta({ description: "`/mute` in the chat: nothing is sent until unmuted (false when not linked)" }),
  linked_at: timestamp.nullable(),
});

telegramAccountRoutes.post(
  "/me/telegram-link",
  documented({
    id: "createTelegramLinkCode",
    tag: "Auth",
    summary: "Create a Telegram link code",
    description:
      "A one-time code to link the caller's Telegram chat.\n\n" +
      "Sending `/start <code>` to the bot (the `deep_link` does it) within ten minutes links that private chat to the caller; a chat linked before is replaced. " +
      "503 `NOT_CONFIGURED` until an admin has set the bot up.",
    caller: "person",
    responses: { 201: linkCode },
  }),
  person(),
  async (c) => {
    const info = await botInfo(c);
    if (!info) throw notConfigured("an admin has to run POST /api/v1/telegram/setup");
    const code = randomSecret();
    const expiresAt = new Date(Date.now() + LINK_CODE_MS).toISOString();
    await c.var.db.insert(telegramLinkCodes).values({ codeHash: await sha256Hex(code), userId: currentUser(c).id, expiresAt });
    // The code links a chat to the account: an idempotent answer keeps it sealed, like the table keeps its hash.
    c.set("secretResponse", "sealed");
    return c.json({ code, expires_at: expiresAt, deep_link: `https://t.me/${info.username}?start=${code}` }, 201);
  },
);

telegramAccountRoutes.get(
  "/me/telegram",
  documented({
    id: "getTelegramLink",
    tag: "Auth",
    summary: "Get the Telegram link",
    description: "Whether the caller's Telegram chat is linked.",
    caller: "person",
    responses: { 200: telegramLink },
  }),
  person(),
  async (c) => {
    const link = await c.var.db.query.telegramLinks.findFirst({ where: eq(telegramLinks.userId, currentUser(c).id) });
    return c.json({ linked: Boolean(link), muted: link?.muted ?? false, linked_at: link?.createdAt ?? null });
  },
);

telegramAccountRoutes.delete(
  "/me/telegram",
  documented({
    id: "unlinkTelegram",
    tag: "Auth",
    summary: "Unlink the caller's Telegram chat",
    description: "The same as `/unlink` in the chat; nothing is sent there afterwards. Unlinking when no chat is linked is a 204 too.",
    caller: "person",
    responses: { 204: { description: "Unlinked" } },
  }),
  person(),
  async (c) => {
    await c.env.DB.batch(forgetLinks(c.env, "user_id = ?1", currentUser(c).id));
    return c.body(null, 204);
  },
);
