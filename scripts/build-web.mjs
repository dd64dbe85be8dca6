#!/usr/bin/env node
/**
 * Builds the dashboard into web/dist, which the Worker serves as static
 * assets: one minified script and one stylesheet, plus web/public as is.
 * `--watch` rebuilds on change (npm start).
 */
import { build, context } from "esbuild";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { kib, webBuildOptions, webSizes } from "./web-build.mjs";

const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const out = `${root}/web/dist`;
const options = webBuildOptions(root);

rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}/assets`, { recursive: true });
cpSync(`${root}/web/public`, out, { recursive: true });
// The API reference at /docs (src/routes/reference.ts) runs Scalar's page from here, not from a CDN.
mkdirSync(`${out}/reference`);
cpSync(`${root}/node_modules/@scalar/api-reference/dist/browser/standalone.js`, `${out}/reference/scalar.js`);

if (process.argv.includes("--watch")) {
  const ctx = await context(options);
  await ctx.watch();
} else {
  const { metafile } = await build({ ...options, metafile: true });
  const size = webSizes(metafile, root);
  // One line: the first load is the figure that matters; the chunks loaded on demand are summed (esbuild names them).
  console.log(
    `dashboard built: first load ${kib(size.firstLoadBytes)} gzipped (${size.firstLoadFiles} files); ${size.lazyFiles} chunks loaded on demand, ${kib(size.lazyBytes)} gzipped in all`,
  );
}
