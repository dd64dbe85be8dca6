/**
 * Browser tests: the dashboard in real Chromium (Debian's, driven by
 * playwright-core) against the hub running under `wrangler dev` with its own
 * local state. They run in Node, after the workerd suite.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test-browser/**/*.test.ts"],
    globalSetup: ["./test-browser/hub.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
