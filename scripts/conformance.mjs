/**
 * `npm run conformance`: runs the MCP conformance test (test-browser/mcp-conformance.test.ts, against the hub under
 * `wrangler dev`; needs `npm run build:api && npm run build:web` first) and the A2A TCK port (test/a2a-conformance*.test.ts,
 * in workerd, with vitest's JSON report), then renders docs/CONFORMANCE.md from their results.
 *
 *   npm run conformance                 both, then the document
 *   npm run conformance -- --no-a2a     the MCP suite only (the A2A section says it was not run)
 *   npm run conformance -- --render     no runs: the document from the last results in test-results/
 *
 * Exits non-zero when a run failed; the document is written all the same, saying which scenarios failed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import { conformanceDoc } from "./conformance-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const results = path.join(root, "test-results");
const MCP_RESULTS = path.join(results, "mcp-conformance.json");
const A2A_REPORT = path.join(results, "a2a-conformance.json");
const DOC = path.join(root, "docs/CONFORMANCE.md");

const args = new Set(process.argv.slice(2));
const bin = path.join(root, "node_modules/.bin");
// The conformance CLI and wrangler need the repository's Node (a devDependency), first on PATH as under `npm run`.
const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` };

/** vitest with these arguments, its output shown; true when every test passed. */
function vitest(...argv) {
  console.log(`• vitest ${argv.join(" ")}`);
  return spawnSync(path.join(bin, "vitest"), ["run", ...argv], { cwd: root, env, stdio: "inherit" }).status === 0;
}

let ok = true;
mkdirSync(results, { recursive: true });
if (!args.has("--render")) {
  ok = vitest("-c", "vitest.browser.config.ts", "test-browser/mcp-conformance.test.ts") && ok;
  if (!args.has("--no-a2a")) {
    const a2a = readdirSync(path.join(root, "test"))
      .filter((f) => /^a2a-conformance.*\.test\.ts$/.test(f))
      .map((f) => `test/${f}`);
    ok = vitest(...a2a, "--reporter=default", "--reporter=json", `--outputFile.json=${A2A_REPORT}`) && ok;
  }
}

if (!existsSync(MCP_RESULTS)) {
  console.error(`No MCP results at ${path.relative(root, MCP_RESULTS)}: run without --render first.`);
  process.exit(1);
}
const mcp = JSON.parse(readFileSync(MCP_RESULTS, "utf8"));
const a2a = !args.has("--no-a2a") && existsSync(A2A_REPORT) ? JSON.parse(readFileSync(A2A_REPORT, "utf8")) : null;
// Formatted as prettier formats the repository's files (the tables aligned), so a regenerated file differs only where results do.
const options = { ...(await prettier.resolveConfig(DOC)), filepath: DOC };
writeFileSync(DOC, await prettier.format(conformanceDoc({ mcp, a2a }), options));
console.log(`• wrote ${path.relative(root, DOC)}`);
process.exit(ok ? 0 : 1);
