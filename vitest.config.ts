import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
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
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup.ts"],
      globalSetup: ["./test/receiver-setup.ts"],
      testTimeout: 30_000,
    },
  };
});
