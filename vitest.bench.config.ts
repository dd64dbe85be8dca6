/**
 * The in-runtime half of `npm run bench`: drives the ProjectRoom directly inside workerd, without HTTP. The bench's
 * baseline Worker runs beside the hub, so a figure can be set against a bare Durable Object in the same runtime.
 */
import { readFileSync } from "node:fs";
import { build } from "esbuild";
import { defineConfig } from "vitest/config";
import { workerdConfig } from "./vitest.config";

/** The name @cloudflare/vitest-plugin gives the Worker under test (its runner), for the other Workers to call it. */
const RUNNER = "vitest-plugin-runner-";

/** A bench Worker's module, bundled as Miniflare takes it. */
const bundled = async (entry: string) =>
  (await build({ entryPoints: [entry], bundle: true, format: "esm", write: false, external: ["cloudflare:workers"] })).outputFiles[0]!.text;

export default defineConfig(async () => {
  const [baseline, dashboards] = await Promise.all([bundled("bench/baseline/worker.ts"), bundled("bench/dashboards/worker.ts")]);
  const compatibilityDate = /compatibility_date = "(.+)"/.exec(readFileSync("bench/baseline/wrangler.toml", "utf8"))![1];
  const config = await workerdConfig(
    {
      workers: [
        {
          name: "bench-baseline",
          modules: true,
          script: baseline,
          compatibilityDate,
          durableObjects: { BROADCASTER: "Broadcaster" },
        },
        {
          name: "bench-dashboards",
          modules: true,
          script: dashboards,
          compatibilityDate,
          // The hub's Worker through its named entrypoint (bench/hub-entry.ts), and through the runner's default one, which
          // runs the same fetch but costs every frame of a socket more.
          serviceBindings: { HUB: { name: RUNNER, entrypoint: "HubWorker" }, RUNNER_DEFAULT: RUNNER, BASELINE: "bench-baseline" },
          durableObjects: { DASHBOARDS: "Dashboards", BROADCASTER: { className: "Broadcaster", scriptName: "bench-baseline" } },
        },
      ],
      durableObjects: {
        BENCH_BROADCASTER: { className: "Broadcaster", scriptName: "bench-baseline" },
        BENCH_DASHBOARDS: { className: "Dashboards", scriptName: "bench-dashboards" },
      },
    },
    { path: "bench/hub-entry.ts", entrypoints: ["HubWorker"] },
  );
  return { ...config, test: { ...config.test, include: ["bench/**/*.bench-test.ts"], testTimeout: 600_000 } };
});
