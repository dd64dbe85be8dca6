/**
 * The MCP conformance package's CLI, run as a child process: what it lists, and one scenario's checks against a URL.
 * It needs Node 22 or later, so it runs on the repository's own Node (the `node` devDependency), not whatever is first on PATH.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const root = path.resolve(import.meta.dirname, "..");
const node = path.join(root, "node_modules/.bin/node");
const packageDir = path.join(root, "node_modules/@modelcontextprotocol/conformance");
const cli = path.join(packageDir, "dist/index.js");

export const CONFORMANCE_VERSION: string = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")).version;

const run = (args: string[], timeout = 60_000) => promisify(execFile)(node, [cli, ...args], { timeout, maxBuffer: 16 << 20 });

/** The `  - name` lines under the heading that starts with `heading`, up to the next blank line. */
function listedUnder(output: string, heading: string): string[] {
  const lines = output.split("\n");
  const start = lines.findIndex((l) => l.startsWith(heading));
  if (start < 0) throw new Error(`no "${heading}" in the CLI's list:\n${output}`);
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = line.match(/^\s+- (\S+)/);
    if (!m) break;
    names.push(m[1]!);
  }
  return names;
}

/** Every server scenario the package has (`conformance list --server`). */
export async function listedServerScenarios(): Promise<string[]> {
  const { stdout } = await run(["list", "--server"]);
  return listedUnder(stdout, "Server scenarios");
}

/** The server scenarios a revision's frozen requirements name: required, and run but not scored (`list --requirements`). */
export async function revisionServerScenarios(revision: string): Promise<string[]> {
  const { stdout } = await run(["list", "--server", "--requirements", revision]);
  const required = listedUnder(stdout, "Server scenarios");
  const unscored = [...stdout.matchAll(/^\s+- (\S+) \[server\]$/gm)].map((m) => m[1]!);
  return [...required, ...unscored];
}

export type CheckStatus = "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
export interface Check {
  id: string;
  name: string;
  status: CheckStatus;
  errorMessage?: string;
  description?: string;
}

/**
 * Runs one scenario against `url` at `revision`'s wire (`--force`: extension scenarios are not on the revisions' timeline)
 * and answers its checks. The CLI's exit status is not used: a failed check is read from the checks themselves.
 */
export async function runScenario(url: string, scenario: string, revision: string): Promise<Check[]> {
  const out = mkdtempSync(path.join(tmpdir(), "mcp-conformance-"));
  try {
    const args = ["server", "--url", url, "--scenario", scenario, "--spec-version", revision, "--force", "-o", out, "--timeout", "30000"];
    const said = await run(args, 45_000).catch((e: { stdout?: string; stderr?: string }) => e);
    const dir = readdirSync(out).find((d) => d.startsWith(`server-${scenario}-`));
    if (!dir) throw new Error(`${scenario} wrote no checks:\n${said.stdout ?? ""}\n${said.stderr ?? ""}`);
    return JSON.parse(readFileSync(path.join(out, dir, "checks.json"), "utf8")) as Check[];
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
