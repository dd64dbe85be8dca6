/**
 * Starts the hub for the browser tests: `wrangler dev` on a free port with a
 * fresh local state (D1 migrated, fixed test secrets), and its first admin;
 * Telegram's Bot API is a minimal fake beside it, and Slack's Web API the workerd tests' fake (test/slack-api-setup.ts).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import slackWebApi from "../test/slack-api-setup";
import { shardBindings } from "../scripts/deploy-plan.mjs";

const root = path.resolve(import.meta.dirname, "..");
const wrangler = path.join(root, "node_modules/.bin/wrangler");
export const ADMIN = { email: "admin@example.com", password: "admin-password-1" };
const BOOTSTRAP_TOKEN = "browser-test-bootstrap-token";
const TELEGRAM_WEBHOOK_SECRET = "browser-test-telegram-secret";

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });

declare module "vitest" {
  export interface ProvidedContext {
    hub: { url: string; admin: typeof ADMIN; state: string; telegramWebhookSecret: string; slackApi: string };
  }
}

let child: ChildProcess | undefined;
let state: string | undefined;
let botApi: Server | undefined;
let closeSlackApi: (() => Promise<void>) | undefined;

/** Telegram's Bot API as far as the hub's setup and the bot's replies use it: who the bot is, and yes to the rest. */
async function fakeBotApi(): Promise<string> {
  const server = createHttpServer((req, res) => {
    req.resume().on("end", () => {
      const method = req.url?.match(/^\/bot[^/]+\/(\w+)$/)?.[1];
      const result = method === "getMe" ? { id: 1, is_bot: true, first_name: "Hub", username: "hub_test_bot" } : true;
      res.writeHead(method ? 200 : 404, { "Content-Type": "application/json" });
      res.end(JSON.stringify(method ? { ok: true, result } : { ok: false, error_code: 404, description: "Not Found" }));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  botApi = server;
  return `http://127.0.0.1:${port}`;
}

export default async function setup(project: TestProject) {
  state = mkdtempSync(path.join(tmpdir(), "hub-browser-"));
  // Every shard wrangler.toml declares gets every migration, as npm start does.
  for (const shard of shardBindings(readFileSync(path.join(root, "wrangler.toml"), "utf8"))) {
    execFileSync(wrangler, ["d1", "migrations", "apply", shard, "--local", "--persist-to", state], {
      cwd: root,
      stdio: "ignore",
      env: { ...process.env, CI: "true" },
    });
  }
  const port = await freePort();
  process.env.SLACK_API_PORT = String(await freePort());
  closeSlackApi = await slackWebApi();
  const slackApi = `http://127.0.0.1:${process.env.SLACK_API_PORT}`;
  const vars = {
    JWT_SECRET: "browser-test-jwt-secret-long-enough-for-hs256",
    BOOTSTRAP_TOKEN,
    WEBHOOK_ALLOW_PRIVATE: "true",
    // Seals webhook signing secrets: without it creating a webhook is refused.
    DATA_KEY: "browser-test-data-key",
    TELEGRAM_BOT_TOKEN: "1:browser-test-bot-token",
    TELEGRAM_WEBHOOK_SECRET,
    TELEGRAM_API_ROOT: await fakeBotApi(),
    SLACK_API_ROOT: `${slackApi}/api/`,
    SLACK_SIGNING_SECRET: "browser-test-slack-signing-secret",
    SLACK_CLIENT_ID: "1111.2222",
    SLACK_CLIENT_SECRET: "browser-test-slack-client-secret",
  };
  child = spawn(
    wrangler,
    [
      "dev",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--local",
      "--persist-to",
      state,
      "--inspector-port",
      String(await freePort()),
      "--log-level",
      "error",
      // GET /cdn-cgi/handler/scheduled runs the hourly housekeeping on demand (the archive's test).
      "--test-scheduled",
      ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
    ],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let start = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/v1/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() - start > 120_000) throw new Error("the hub did not start within 120 s");
    await new Promise((r) => setTimeout(r, 300));
  }
  const res = await fetch(`${url}/api/v1/auth/bootstrap`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    body: JSON.stringify(ADMIN),
  });
  if (res.status !== 201) throw new Error(`bootstrap answered ${res.status}: ${await res.text()}`);
  project.provide("hub", { url, admin: ADMIN, state, telegramWebhookSecret: TELEGRAM_WEBHOOK_SECRET, slackApi });
  // Returned, not exported: vitest ignores a `teardown` export beside a default one, which left wrangler running.
  return teardown;
}

function teardown() {
  child?.kill("SIGTERM");
  botApi?.closeAllConnections();
  botApi?.close();
  void closeSlackApi?.();
  if (state) rmSync(state, { recursive: true, force: true });
}
