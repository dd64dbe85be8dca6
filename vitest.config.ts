import { createServer, type AddressInfo } from "node:net";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** A port nothing listens on now, for a fake of a chat's API (test/bot-api-setup.ts, test/slack-api-setup.ts). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });

/**
 * The suite's configuration; `miniflare` adds options of Miniflare's beside the tests' own (the bench's other Workers),
 * and `main` names a module to run as the Worker under test in place of wrangler.toml's, with the named entrypoints
 * it adds (`entrypoints`).
 */
export async function workerdConfig(miniflare: Record<string, unknown> = {}, main?: { path: string; entrypoints: string[] }) {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  process.env.BOT_API_PORT ??= String(await freePort());
  process.env.SLACK_API_PORT ??= String(await freePort());
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        ...(main && { main: main.path, additionalExports: Object.fromEntries(main.entrypoints.map((name) => [name, "WorkerEntrypoint" as const])) }),
        miniflare: {
          // Secrets come from .dev.vars or `wrangler secret put` elsewhere; tests use fixed ones.
          bindings: {
            TEST_MIGRATIONS: migrations,
            JWT_SECRET: "test-jwt-secret-that-is-long-enough-for-hs256",
            BOOTSTRAP_TOKEN: "test-bootstrap-token",
            PUBLIC_URL: "https://hub.test",
            CORS_ORIGINS: "https://dash.example.test",
            DATA_KEY: "test-data-key",
            // Webhook receivers in tests listen on loopback (test/integrations-setup.ts).
            WEBHOOK_ALLOW_PRIVATE: "true",
            TELEGRAM_API_ROOT: `http://127.0.0.1:${process.env.BOT_API_PORT}`,
            TELEGRAM_BOT_TOKEN: "4242:test-bot-token",
            TELEGRAM_WEBHOOK_SECRET: "test-telegram-webhook-secret",
            SLACK_API_ROOT: `http://127.0.0.1:${process.env.SLACK_API_PORT}/api/`,
            SLACK_SIGNING_SECRET: "test-slack-signing-secret",
            SLACK_CLIENT_ID: "1111.2222",
            SLACK_CLIENT_SECRET: "test-slack-client-secret",
            // A line per request and per room operation would bury the failures a test run needs to show.
            LOG_LEVEL: "warn",
            // A blocking A2A send on a task nobody works gives up in seconds, not the deployed 25.
            A2A_BLOCKING_WAIT_SECONDS: "2",
            // A model reviewer that does not answer is given up on in seconds, not the deployed 60 (test/model-review.test.ts).
            CODE_REVIEW_TIMEOUT_SECONDS: "2",
          },
          // A third shard beside wrangler.toml's two, so that reads across shards are tested over more than two.
          d1Databases: { DB: "directory", DB_1: "shard-1", DB_2: "shard-2" },
          ...miniflare,
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup.ts"],
      globalSetup: [
        "./test/receiver-setup.ts",
        "./test/bot-api-setup.ts",
        "./test/collector-setup.ts",
        "./test/model-api-setup.ts",
        "./test/slack-api-setup.ts",
      ],
      testTimeout: 30_000,
    },
  };
}

export default defineConfig(() => workerdConfig());
