/**
 * A fake of Slack's Web API and of its response URLs, run in Node beside the tests (the hub reaches it at
 * SLACK_API_ROOT, `http://127.0.0.1:<port>/api/`): it answers the methods the hub calls the way Slack does (form
 * bodies, `{ok, error}` answers, 429 with Retry-After), records every call, and can be told to refuse a channel's
 * next posts. A bot token `xoxb-<team>-…` belongs to that team; `xoxb-revoked-…` is refused as Slack refuses a revoked
 * one; a channel `CNONE…` does not exist and the bot is not in `COUT…` until it joins. Tests read and steer it at
 * `/control/...`; response URLs are `/response/<anything>`.
 */
import { createServer } from "node:http";

export interface SlackCall {
  method: string;
  token: string | null;
  params: Record<string, any>;
  at: number;
  /** What Slack answered, when it refused. */
  refused?: string;
}

interface Refusal {
  times: number;
  status: number;
  error: string;
  retry_after?: number;
}

/** Form values as Slack reads them: objects and arrays arrive as JSON text. */
function paramsOf(raw: string, contentType: string | undefined): Record<string, any> {
  if (contentType?.includes("application/json")) return raw ? JSON.parse(raw) : {};
  const params: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    params[key] = /^[[{]/.test(value) ? JSON.parse(value) : value;
  }
  return params;
}

export default async function setup() {
  const port = Number(process.env.SLACK_API_PORT);
  let calls: SlackCall[] = [];
  const refusals = new Map<string, Refusal>();
  let clock = 1_800_000_000;
  const nextTs = () => `${clock}.${String(++clock % 1_000_000).padStart(6, "0")}`;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const url = new URL(req.url!, "http://slack-api");
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "Content-Type": "application/json", ...headers });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === "/control/calls") return json(200, calls);
      if (url.pathname === "/control/reset") {
        calls = [];
        refusals.clear();
        return json(200, {});
      }
      if (url.pathname === "/control/refuse") {
        const { channel, ...refusal } = JSON.parse(raw) as Refusal & { channel: string };
        refusals.set(channel, refusal);
        return json(200, {});
      }
      const token = req.headers.authorization?.replace(/^Bearer /, "") ?? null;
      if (url.pathname.startsWith("/response/")) {
        calls.push({ method: "response_url", token, params: { path: url.pathname, ...paramsOf(raw, "application/json") }, at: Date.now() });
        res.writeHead(200, { "Content-Type": "text/plain" });
        return res.end("ok");
      }
      const method = url.pathname.match(/^\/api\/([\w.]+)$/)?.[1];
      if (!method) return json(404, { ok: false, error: "unknown_method" });
      const params = paramsOf(raw, req.headers["content-type"]);
      const call: SlackCall = { method, token, params, at: Date.now() };
      calls.push(call);
      const team = token?.match(/^xoxb-([A-Z0-9]+)-/)?.[1];
      if (method !== "oauth.v2.access" && (!team || token?.startsWith("xoxb-revoked-"))) {
        call.refused = "invalid_auth";
        return json(200, { ok: false, error: "invalid_auth" });
      }
      const channel = typeof params.channel === "string" ? params.channel : "";
      const refusal = refusals.get(channel);
      if (refusal && refusal.times > 0 && (method === "chat.postMessage" || method === "chat.update")) {
        refusal.times--;
        call.refused = refusal.error;
        const headers: Record<string, string> = refusal.retry_after ? { "Retry-After": String(refusal.retry_after) } : {};
        return json(refusal.status, { ok: false, error: refusal.error }, headers);
      }
      switch (method) {
        case "auth.test":
          return json(200, { ok: true, url: `https://${team}.slack.test/`, team: `Team ${team}`, user: "orc", team_id: team, user_id: "UBOT", bot_id: "BBOT" });
        case "oauth.v2.access": {
          const code = String(params.code ?? "");
          if (!code.startsWith("good-")) return json(200, { ok: false, error: "invalid_code" });
          const id = code.slice(5).toUpperCase() || "TOAUTH";
          return json(200, {
            ok: true,
            app_id: "AAPP",
            access_token: `xoxb-${id}-oauth-token`,
            token_type: "bot",
            scope: "commands,chat:write",
            bot_user_id: "UBOT",
            team: { id, name: `Team ${id}` },
            authed_user: { id: "UADMIN" },
          });
        }
        case "chat.postMessage": {
          const ts = nextTs();
          return json(200, { ok: true, channel, ts, message: { text: params.text, ts, thread_ts: params.thread_ts } });
        }
        case "chat.update":
          return json(200, { ok: true, channel, ts: params.ts, text: params.text });
        case "views.open":
        case "views.update":
          return json(200, { ok: true, view: { id: `V${Date.now()}`, ...params.view } });
        case "conversations.info":
        case "conversations.join":
          // `CNONE…` is no channel the bot can see; the bot is not yet in `COUT…` until it joins.
          if (channel.startsWith("CNONE")) return json(200, { ok: false, error: "channel_not_found" });
          return json(200, {
            ok: true,
            channel: { id: channel, name: `name-of-${channel.toLowerCase()}`, is_member: method === "conversations.join" || !channel.startsWith("COUT") },
          });
        default:
          return json(200, { ok: true });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
