/**
 * The in-runtime half of `npm run bench`: drives the ProjectRoom directly inside workerd, without HTTP. The bench's
 * baseline Worker runs beside the hub, so a figure can be set against a bare Durable Object in the same runtime.
 */
import { readFileSync } from "node:fs";
import { build } from "esbuild";
import { defineConfig } from "vitest/config";
import { workerdConfig } from "./vitest.config";

export default defineConfig(async () => {
  const baseline = await build({ entryPoints: ["bench/baseline/worker.ts"], bundle: true, format: "esm", write: false, external: ["cloudflare:workers"] });
  const config = await workerdConfig({
    workers: [
      {
        name: "bench-baseline",
        modules: true,
        script: baseline.outputFiles[0]!.text,
        compatibilityDate: /compatibility_date = "(.+)"/.exec(readFileSync("bench/baseline/wrangler.toml", "utf8"))![1],
        durableObjects: { BROADCASTER: "Broadcaster" },
      },
    ],
    durableObjects: { BENCH_BROADCASTER: { className: "Broadcaster", scriptName: "bench-baseline" } },
  });
  return { ...config, test: { ...config.test, include: ["bench/**/*.bench-test.ts"], testTimeout: 600_000 } };
});
