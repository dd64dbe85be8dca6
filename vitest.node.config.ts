/** Tests that need Node rather than workerd (test-node/): checks of what the build writes. */
import { defineConfig } from "vitest/config";

export default defineConfig({ test: { include: ["test-node/**/*.test.ts"] } });
