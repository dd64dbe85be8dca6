#!/usr/bin/env node
/**
 * Builds the dashboard into web/dist, which the Worker serves as static
 * assets: one minified script and one stylesheet, plus web/public as is.
 * `--watch` rebuilds on change (npm start).
 */
import { build, context } from "esbuild";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = `${root}web/dist`;
const options = {
  entryPoints: { app: `${root}web/src/main.tsx` },
  bundle: true,
  minify: true,
  format: "esm",
  // Views that pull in large libraries (the graph's layout) are split off and load when first opened.
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: `${out}/assets`,
  outbase: `${root}web/src`,
  sourcemap: false,
  logLevel: "warning",
  legalComments: "none",
};

rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}/assets`, { recursive: true });
cpSync(`${root}web/public`, out, { recursive: true });
// The API reference at /docs (src/routes/reference.ts) runs Scalar's page from here, not from a CDN.
mkdirSync(`${out}/reference`);
cpSync(`${root}node_modules/@scalar/api-reference/dist/browser/standalone.js`, `${out}/reference/scalar.js`);

if (process.argv.includes("--watch")) {
  const ctx = await context(options);
  await ctx.watch();
} else {
  const { metafile } = await build({ ...options, metafile: true });
  // What a first visit downloads: the page, its stylesheet, app.js and the chunks app.js imports statically.
  const gzipped = (file) => gzipSync(readFileSync(`${root}${file}`)).length;
  const entry = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint?.endsWith("main.tsx"));
  const firstLoad = [`web/dist/index.html`, entry[0], ...entry[1].imports.filter((i) => i.kind === "import-statement").map((i) => i.path), entry[1].cssBundle];
  const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
  const total = firstLoad.reduce((sum, f) => sum + gzipped(f.replace(root, "")), 0);
  const lazy = Object.keys(metafile.outputs).filter((f) => f.endsWith(".js") && !firstLoad.includes(f));
  const lazyTotal = lazy.reduce((sum, f) => sum + gzipped(f.replace(root, "")), 0);
  // One line: the first load is the figure that matters; the chunks loaded on demand are summed (esbuild names them).
  console.log(
    `dashboard built: first load ${kib(total)} gzipped (${firstLoad.length} files); ${lazy.length} chunks loaded on demand, ${kib(lazyTotal)} gzipped in all`,
  );
}
