/**
 * A fake of Telegram's Bot API, run in Node beside the tests (the hub reaches
 * it at TELEGRAM_API_ROOT): it answers the methods the hub calls the way
 * Telegram does (refusing text that is not valid Unicode), records every call,
 * and can be told to answer a chat's next messages with 429 and a retry_after. Tests read and steer it at `/control/...`.
 */
import { createServer } from "node:http";

interface Call {
  method: string;
  body: Record<string, any>;
  at: number;
  /** Why Telegram refused it, when it did. */
  refused?: string;
}

/** Whether every string in a value is valid Unicode: Telegram refuses a lone surrogate (half an emoji) with 400. */
const wellFormed = (value: unknown): boolean =>
  typeof value === "string" ? value.isWellFormed() : typeof value === "object" && value !== null ? Object.values(value).every(wellFormed) : true;

export const BOT_INFO = {
  id: 4242,
  is_bot: true,
  first_name: "Orchestratia",
  username: "hub_test_bot",
  can_join_groups: false,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
};

export default async function setup() {
  const port = Number(process.env.BOT_API_PORT);
  let calls: Call[] = [];
  const refusals = new Map<string, { times: number; error_code: number; description: string; retry_after?: number }>();
  let messageId = 100;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url!, "http://bot-api");
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === "/control/calls") return json(200, calls);
      if (url.pathname === "/control/reset") {
        calls = [];
        return json(200, {});
      }
      if (url.pathname === "/control/refuse") {
        const { chat_id, ...refusal } = JSON.parse(raw);
        refusals.set(String(chat_id), refusal);
        return json(200, {});
      }
      const method = url.pathname.match(/^\/bot[^/]+\/(\w+)$/)?.[1];
      if (!method) return json(404, { ok: false, error_code: 404, description: "Not Found" });
      const body = raw ? JSON.parse(raw) : {};
      if (!wellFormed(body)) {
        const description = "Bad Request: strings must be encoded in UTF-8";
        calls.push({ method, body, at: Date.now(), refused: description });
        return json(400, { ok: false, error_code: 400, description });
      }
      calls.push({ method, body, at: Date.now() });
      switch (method) {
        case "getMe":
          return json(200, { ok: true, result: BOT_INFO });
        case "setWebhook":
        case "answerCallbackQuery":
          return json(200, { ok: true, result: true });
        case "sendMessage": {
          const refusal = refusals.get(String(body.chat_id));
          if (refusal && refusal.times > 0) {
            refusal.times--;
            const { error_code, description, retry_after } = refusal;
            return json(error_code, { ok: false, error_code, description, ...(retry_after ? { parameters: { retry_after } } : {}) });
          }
          return json(200, { ok: true, result: { message_id: ++messageId, date: Math.floor(Date.now() / 1000), chat: { id: Number(body.chat_id), type: "private" }, text: body.text } });
        }
        default:
          return json(200, { ok: true, result: true });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
