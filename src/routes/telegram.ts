/**
 * Telegram (API.md "Telegram"): the bot's webhook, its setup by an admin, and
 * linking a person's chat with a one-time code.
 */
import { eq } from "drizzle-orm";
import { Api, webhookCallback } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { Hono } from "hono";
import { currentUser, person } from "../auth/middleware";
import { randomSecret, sha256Hex } from "../auth/secrets";
import { nowIso } from "../db/client";
import { telegramBot, telegramLinkCodes, telegramLinks } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { Problem } from "../http/problem";
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

telegramWebhookRoutes.post("/webhook", async (c) => {
  const info = await botInfo(c);
  if (!c.env.TELEGRAM_BOT_TOKEN || !c.env.TELEGRAM_WEBHOOK_SECRET || !info) throw notConfigured("POST /api/v1/telegram/setup first");
  const handle = webhookCallback(botFor(c.env, info), "hono", { secretToken: c.env.TELEGRAM_WEBHOOK_SECRET });
  return handle(c);
});

/** `POST /api/v1/telegram/setup` (admin): asks Telegram who the bot is and points its webhook here. */
export const telegramSetupRoutes = new Hono<HubEnv>();

telegramSetupRoutes.post("/setup", person("admin"), async (c) => {
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
});

/** A person's own link: a one-time code for the bot's deep link, and unlinking. */
export const telegramAccountRoutes = new Hono<HubEnv>();

telegramAccountRoutes.post("/me/telegram-link", person(), async (c) => {
  const info = await botInfo(c);
  if (!info) throw notConfigured("an admin has to run POST /api/v1/telegram/setup");
  const code = randomSecret();
  const expiresAt = new Date(Date.now() + LINK_CODE_MS).toISOString();
  await c.var.db.insert(telegramLinkCodes).values({ codeHash: await sha256Hex(code), userId: currentUser(c).id, expiresAt });
  return c.json({ code, expires_at: expiresAt, deep_link: `https://t.me/${info.username}?start=${code}` }, 201);
});

telegramAccountRoutes.get("/me/telegram", person(), async (c) => {
  const link = await c.var.db.query.telegramLinks.findFirst({ where: eq(telegramLinks.userId, currentUser(c).id) });
  return c.json({ linked: Boolean(link), muted: link?.muted ?? false, linked_at: link?.createdAt ?? null });
});

telegramAccountRoutes.delete("/me/telegram", person(), async (c) => {
  await c.env.DB.batch(forgetLinks(c.env, "user_id = ?1", currentUser(c).id));
  return c.body(null, 204);
});
