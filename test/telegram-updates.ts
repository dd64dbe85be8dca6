/**
 * A person's side of a Telegram chat in tests: updates posted to the hub's webhook as Telegram posts them, and what
 * the fake Bot API (test/bot-api-setup.ts) was asked.
 */
import { env } from "cloudflare:test";
import { call } from "./helpers";

export const BOT_API = `http://127.0.0.1:${env.TELEGRAM_API_ROOT.split(":").at(-1)}`;
export const SECRET = { "X-Telegram-Bot-Api-Secret-Token": "test-telegram-webhook-secret" };

export interface BotCall {
  method: string;
  body: Record<string, any>;
  at: number;
  refused?: string;
}
export const botCalls = async (): Promise<BotCall[]> => (await fetch(`${BOT_API}/control/calls`)).json();
export const sentTo = async (chatId: number) => (await botCalls()).filter((c) => c.method === "sendMessage" && Number(c.body.chat_id) === chatId);

export const chat = (chatId: number) => ({ id: chatId, type: "private" });
export const from = (chatId: number) => ({ id: chatId, is_bot: false, first_name: "Ann" });

/** Updates numbered from `first` (a range of the test file's own, so that no two files' updates share an id). */
export function telegramUpdates(first: { updateId: number; messageId: number }) {
  let updateId = first.updateId;
  let messageId = first.messageId;
  /** Posts an update the way Telegram does. */
  const update = (body: Record<string, unknown>, headers: Record<string, string> = SECRET) =>
    call("/telegram/webhook", { body: { update_id: updateId++, ...body }, headers });
  /** A chat's message as Telegram posts it: a command's entity, and the bot's message it replies to. */
  const message = (chatId: number, text: string, replyTo?: string) => {
    const command = text.match(/^\/\w+/);
    return update({
      message: {
        message_id: messageId++,
        date: Math.floor(Date.now() / 1000),
        chat: chat(chatId),
        from: from(chatId),
        text,
        ...(command ? { entities: [{ type: "bot_command", offset: 0, length: command[0].length }] } : {}),
        ...(replyTo
          ? { reply_to_message: { message_id: 1, date: 0, chat: chat(chatId), from: { id: 4242, is_bot: true, first_name: "Orchestratia" }, text: replyTo } }
          : {}),
      },
    });
  };
  /** A press of a button under one of the bot's messages. */
  const press = (chatId: number, data: string) =>
    update({
      callback_query: {
        id: `cb-${updateId}`,
        from: from(chatId),
        chat_instance: "x",
        data,
        message: { message_id: 1, date: 0, chat: chat(chatId), text: "…" },
      },
    });
  return { update, message, press, nextMessageId: () => messageId++ };
}
