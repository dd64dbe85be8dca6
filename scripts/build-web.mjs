#!/usr/bin/env node
/**
 * Builds the dashboard into web/dist, which the Worker serves as static
 * assets: one minified script and one stylesheet, plus web/public as is.
 * `--watch` rebuilds on change (npm start).
 */
import { build, context } from "esbuild";
import { cpSync, mkdirSync, rmSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { readFileSync } from "node:fs";

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
  sourcemap: false,
  logLevel: "warning",
  legalComments: "none",
};

rmSync(out, { recursive: true, force: true });
mkdirSync(`${out}/assets`, { recursive: true });
cpSync(`${root}web/public`, out, { recursive: true });

if (process.argv.includes("--watch")) {
  const ctx = await context(options);
  await ctx.watch();
} else {
  await build(options);
  const size = (file) => {
    const bytes = readFileSync(`${out}/assets/${file}`);
    return `${file} ${(statSync(`${out}/assets/${file}`).size / 1024).toFixed(1)} KiB (${(gzipSync(bytes).length / 1024).toFixed(1)} KiB gzipped)`;
  };
  console.log(`dashboard built: ${size("app.js")}, ${size("app.css")}`);
}
