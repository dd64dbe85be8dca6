/** The in-runtime half of `npm run bench`: drives the ProjectRoom directly inside workerd, without HTTP. */
import { defineConfig, type ViteUserConfig as UserConfig } from "vitest/config";
import base from "./vitest.config";

export default defineConfig(async (env) => {
  const config = (await (base as (e: typeof env) => Promise<UserConfig>)(env)) as UserConfig;
  return { ...config, test: { ...config.test, include: ["bench/**/*.bench-test.ts"], testTimeout: 600_000 } };
});
