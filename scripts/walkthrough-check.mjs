#!/usr/bin/env node
/**
 * `npm run test:walkthrough`: does the README's walkthrough work for someone who just cloned the project?
 *
 * Clones this repository's HEAD into a temporary directory (committed work only, as a newcomer would get it), runs
 * `npm install` and `npm start` there on a free port, reads the admin's credentials and the registration token out
 * of the box `npm start` ends with, then runs the walkthrough's ```sh blocks from that clone's README.md in one bash,
 * in order, and compares what each command printed with the answer the README shows under it (`# → …`).
 * Blocks marked ```sh daemon are not run: they install the official daemon from GitHub with pip, which CI cannot
 * reach, and start a long-running process; the plain-HTTP blocks beside them make the same calls.
 *
 * How an answer is compared: JSON answers match when every member shown is there with that value (answers are
 * abridged: an object may have more members), arrays element by element, and "…" stands for any value; a string
 * ending in "…" matches any string it begins. Other answers are text in which "…" stands for any run of non-space
 * characters. The box's hub address replaces http://localhost:8787 wherever the README says it.
 *
 * KEEP=1 keeps the clone afterwards.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const README_HUB = "http://localhost:8787";
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const log = (text) => console.log(`[walkthrough ${elapsed()}] ${text}`);

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });

/** The walkthrough's blocks: every fenced block between "## Walkthrough" and the next "## " heading. */
export function walkthroughBlocks(readme) {
  const start = readme.search(/^## Walkthrough/m);
  if (start === -1) throw new Error('README.md has no "## Walkthrough" section');
  const rest = readme.slice(start + 3);
  const next = rest.search(/^## /m);
  const section = next === -1 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^```([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({ info: m[1].trim(), body: m[2] }));
}

/** A block's steps: the command lines up to each `# → answer`; commands with no answer shown are steps too. */
export function stepsOf(body) {
  const steps = [];
  let command = [];
  for (const line of body.split("\n")) {
    const answer = line.match(/^# → (.*)$/);
    if (answer) {
      steps.push({ command: command.join("\n"), expected: answer[1] });
      command = [];
    } else if (line.trim() !== "") {
      command.push(line);
    }
  }
  if (command.length > 0) steps.push({ command: command.join("\n"), expected: null });
  return steps;
}

const ANY = "…";

/** Whether `actual` is what `expected` shows (see the header for the rules); the reason when it is not. */
export function mismatch(expected, actual, where = "the answer") {
  if (expected === ANY) return null;
  if (typeof expected === "string" && expected.endsWith(ANY) && expected !== ANY) {
    return typeof actual === "string" && actual.startsWith(expected.slice(0, -1)) ? null : `${where}: ${JSON.stringify(actual)} does not begin with ${JSON.stringify(expected.slice(0, -1))}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `${where}: expected ${expected.length} items, got ${JSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const why = mismatch(expected[i], actual[i], `${where}[${i}]`);
      if (why) return why;
    }
    return null;
  }
  if (expected && typeof expected === "object") {
    if (!actual || typeof actual !== "object" || Array.isArray(actual)) return `${where}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${where}.${key} is missing`;
      const why = mismatch(value, actual[key], `${where}.${key}`);
      if (why) return why;
    }
    return null;
  }
  return Object.is(expected, actual) ? null : `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** Compares one step's printed output with the README's answer. */
export function checkAnswer(expectedText, output) {
  const printed = output.trim();
  let expected;
  try {
    expected = JSON.parse(expectedText);
  } catch {
    const pattern = new RegExp(`^${expectedText.split(ANY).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\S+")}$`);
    return pattern.test(printed) ? null : `expected ${expectedText}, got ${printed}`;
  }
  let actual;
  try {
    actual = JSON.parse(printed);
  } catch {
    return `expected JSON like ${expectedText}, got ${printed || "nothing"}`;
  }
  return mismatch(expected, actual);
}

/** The values in `npm start`'s box. */
export function readBox(output) {
  const value = (label) => output.match(new RegExp(`│ ${label}\\s+(\\S+)`))?.[1];
  const box = { HUB: value("Hub"), ADMIN_EMAIL: value("Admin email"), ADMIN_PASSWORD: value("Admin password"), REG_TOKEN: value("Registration token") };
  for (const [name, v] of Object.entries(box)) if (!v) throw new Error(`npm start's box has no value for ${name}`);
  return box;
}

async function startHub(dir, port) {
  const child = spawn("npm", ["start"], { cwd: dir, env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const deadline = Date.now() + 300_000;
  while (!/Registration token[\s\S]*└/.test(output)) {
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start printed no box within 300 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, output: () => output };
}

function stopHub(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, 10_000);
    child.on("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    // The whole group: npm, start.mjs, wrangler and workerd.
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      resolve();
    }
  });
}

/** The bash script: the box's values in place of the README's, each step after a marker line. */
export function scriptFor(steps, box) {
  const lines = ["set -euo pipefail"];
  steps.forEach((step, i) => {
    const command = step.command.replace(/^(HUB|ADMIN_EMAIL|ADMIN_PASSWORD|REG_TOKEN)=.*$/gm, (_, name) => `${name}='${box[name]}'`);
    lines.push(`echo '@@step ${i}@@'`, command);
  });
  lines.push("echo '@@step end@@'");
  return lines.join("\n");
}

async function main() {
  const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  if (execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: root, encoding: "utf8" }).trim()) {
    log("note: uncommitted changes are not in the clone; the check runs what is committed");
  }
  const work = mkdtempSync(path.join(tmpdir(), "orchestratia-walkthrough-"));
  const dir = path.join(work, "hub");
  let hub;
  let failed = false;
  try {
    log(`cloning ${head.slice(0, 12)} into ${dir}`);
    execFileSync("git", ["clone", "--quiet", "--no-checkout", root, dir], { stdio: "inherit" });
    execFileSync("git", ["checkout", "--quiet", "--detach", head], { cwd: dir, stdio: "inherit" });
    log("npm install");
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "inherit" });

    const port = await freePort();
    log(`npm start on port ${port}`);
    hub = await startHub(dir, port);
    const box = readBox(hub.output());
    log(`the box: hub ${box.HUB}, admin ${box.ADMIN_EMAIL}`);

    const blocks = walkthroughBlocks(readFileSync(path.join(dir, "README.md"), "utf8"));
    const runnable = blocks.filter((b) => b.info === "sh");
    const skipped = blocks.filter((b) => b.info !== "sh");
    const steps = runnable.flatMap((b) => stepsOf(b.body));
    const answered = steps.filter((s) => s.expected !== null);
    log(`${runnable.length} blocks to run (${steps.length} steps, ${answered.length} with an answer), ${skipped.length} not run (${skipped.map((b) => b.info || "no language").join(", ")})`);
    if (!answered.some((s) => s.expected.includes('"resolved_inputs"'))) throw new Error("the walkthrough shows no resolved_inputs answer to check");
    for (const name of ["HUB", "ADMIN_EMAIL", "ADMIN_PASSWORD", "REG_TOKEN"]) {
      if (!steps.some((s) => new RegExp(`^${name}=`, "m").test(s.command))) throw new Error(`the walkthrough never sets ${name} from the box`);
    }

    const scriptPath = path.join(work, "walkthrough.sh");
    writeFileSync(scriptPath, scriptFor(steps, box));
    const run = spawn("bash", [scriptPath], { cwd: work, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    run.stdout.on("data", (d) => (out += d));
    run.stderr.on("data", (d) => (err += d));
    const code = await new Promise((resolve) => run.on("exit", resolve));

    const outputs = new Map();
    for (const part of out.split(/^@@step /m).slice(1)) {
      const [marker, ...rest] = part.split("\n");
      outputs.set(marker.replace(/@@$/, ""), rest.join("\n"));
    }
    steps.forEach((step, i) => {
      const printed = outputs.get(String(i));
      const first = step.command.split("\n")[0];
      if (printed === undefined) {
        failed = true;
        console.log(`  ✗ never reached: ${first}`);
        return;
      }
      if (step.expected === null) return;
      const why = checkAnswer(step.expected.replaceAll(README_HUB, box.HUB), printed);
      if (why) failed = true;
      console.log(`  ${why ? "✗" : "✓"} ${first.length > 90 ? `${first.slice(0, 89)}…` : first}${why ? `\n      ${why}` : ""}`);
    });
    if (code !== 0 || !outputs.has("end")) {
      failed = true;
      console.log(`  ✗ bash stopped with code ${code}${err ? `:\n${err}` : ""}`);
    }
  } catch (e) {
    failed = true;
    console.error(`✗ ${e instanceof Error ? e.message : e}`);
  } finally {
    if (hub) {
      await stopHub(hub.child);
      log("hub stopped");
    }
    if (process.env.KEEP) log(`kept ${dir}`);
    else rmSync(work, { recursive: true, force: true });
  }
  log(failed ? "FAILED" : "passed");
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
