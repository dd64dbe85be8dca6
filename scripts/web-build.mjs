/**
 * How the dashboard is built (esbuild's options) and what its first load weighs, shared by scripts/build-web.mjs and
 * the dashboard bench (which builds an earlier commit's dashboard the same way, to compare the two).
 */
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

/** esbuild's options for the dashboard under `dir` (a checkout's root), written to `${dir}/web/dist/assets`. */
export function webBuildOptions(dir, nodePaths = []) {
  return {
    absWorkingDir: dir,
    entryPoints: { app: `${dir}/web/src/main.tsx` },
    bundle: true,
    minify: true,
    format: "esm",
    // Views that pull in large libraries (the graph's layout) are split off and load when first opened.
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: `${dir}/web/dist/assets`,
    outbase: `${dir}/web/src`,
    sourcemap: false,
    logLevel: "warning",
    legalComments: "none",
    nodePaths,
  };
}

/**
 * What a first visit downloads, gzipped: the page, its stylesheet, app.js and the chunks app.js imports statically;
 * and the chunks loaded on demand. `dir` is the build's absWorkingDir (the metafile's paths are relative to it).
 */
export function webSizes(metafile, dir) {
  const gzipped = (file) => gzipSync(readFileSync(`${dir}/${file}`)).length;
  const entry = Object.entries(metafile.outputs).find(([, o]) => o.entryPoint?.endsWith("main.tsx"));
  const firstLoad = [`web/dist/index.html`, entry[0], ...entry[1].imports.filter((i) => i.kind === "import-statement").map((i) => i.path), entry[1].cssBundle];
  const lazy = Object.keys(metafile.outputs).filter((f) => f.endsWith(".js") && !firstLoad.includes(f));
  return {
    firstLoadBytes: firstLoad.reduce((sum, f) => sum + gzipped(f), 0),
    firstLoadFiles: firstLoad.length,
    lazyBytes: lazy.reduce((sum, f) => sum + gzipped(f), 0),
    lazyFiles: lazy.length,
  };
}

export const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
