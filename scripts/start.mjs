#!/usr/bin/env node
/**
 * `npm start`: runs the hub locally with wrangler (local D1, R2 and Durable
 * Objects, kept in .wrangler/state between runs). Creates .dev.vars with fresh
 * secrets when missing, applies the migrations, starts `wrangler dev`, makes
 * sure a development admin exists, and ends with one box of what to open and
 * sign in with. Wrangler's own output is trimmed to errors, warnings, the
 * Worker's logs and 5xx answers (dev-output-filter.mjs); VERBOSE=1 shows all of it.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { devOutputFilter } from "./dev-output-filter.mjs";
import { shardBindings } from "./deploy-plan.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const port = process.env.PORT || "8787";
const hub = `http://localhost:${port}`;
const devVarsPath = `${root}.dev.vars`;
const wrangler = `${root}node_modules/.bin/wrangler`;
const verbose = Boolean(process.env.VERBOSE);

const secret = (bytes) => randomBytes(bytes).toString("base64url");

/** Reads .dev.vars, adding any setting it lacks; existing values are kept so data and sign-ins survive restarts. */
function ensureDevVars() {
  const existing = existsSync(devVarsPath) ? readFileSync(devVarsPath, "utf8") : "";
  const have = new Map(
    existing
      .split("\n")
      .map((line) => line.match(/^\s*([A-Z0-9_]+)\s*=\s*"?(.*?)"?\s*$/))
      .filter(Boolean)
      .map((m) => [m[1], m[2]]),
  );
  const wanted = {
    JWT_SECRET: () => secret(48),
    BOOTSTRAP_TOKEN: () => secret(32),
    DATA_KEY: () => secret(32),
    // Webhooks to local receivers (http://localhost:...) while developing.
    WEBHOOK_ALLOW_PRIVATE: () => "true",
    DEV_ADMIN_EMAIL: () => "admin@orchestratia.localhost",
    DEV_ADMIN_PASSWORD: () => secret(12),
  };
  const added = Object.entries(wanted).filter(([key]) => !have.has(key));
  if (added.length > 0) {
    const header = existing ? "" : "# Local development secrets (git-ignored). Production uses `wrangler secret put`.\n";
    const lines = added.map(([key, make]) => {
      const value = make();
      have.set(key, value);
      return `${key}="${value}"`;
    });
    writeFileSync(devVarsPath, `${existing}${existing && !existing.endsWith("\n") ? "\n" : ""}${header}${lines.join("\n")}\n`, { mode: 0o600 });
    console.log(`• ${existing ? "added" : "created"} .dev.vars (${added.map(([k]) => k).join(", ")})`);
  }
  return Object.fromEntries(have);
}

async function waitForHub(child, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${hub}/api/v1/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the hub did not answer at ${hub} within ${timeoutMs / 1000} s`);
}

async function post(path, body, token) {
  const res = await fetch(`${hub}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json().catch(() => ({})) };
}

/** Signs the development admin in, creating it first on an empty hub. */
async function devAdminSession(vars) {
  const credentials = { email: vars.DEV_ADMIN_EMAIL, password: vars.DEV_ADMIN_PASSWORD };
  const boot = await post("/api/v1/auth/bootstrap", { ...credentials, name: "Development admin" }, vars.BOOTSTRAP_TOKEN);
  if (boot.status === 201) return boot.json;
  const login = await post("/api/v1/auth/login", credentials);
  if (login.status === 200) return login.json;
  throw new Error(
    `cannot sign in as ${credentials.email} (${login.json.detail ?? login.status}); ` +
      "the hub already has users: sign in with your own account, or delete .wrangler/state to start afresh",
  );
}

/** The one box `npm start` ends with: each line "label  value", so it reads well and scripts can parse it. */
function printBox(vars, token) {
  const rows = [
    ["Hub", hub],
    ["Dashboard", `${hub}/`],
    ["API reference", `${hub}/docs`],
    ["MCP endpoint", `${hub}/mcp`],
    ["Admin email", vars.DEV_ADMIN_EMAIL],
    ["Admin password", vars.DEV_ADMIN_PASSWORD],
    ["Registration token", token.token],
    ["", `(${token.max_uses} uses, until ${token.expires_at})`],
  ];
  const label = Math.max(...rows.map(([l]) => l.length)) + 2;
  const lines = [
    "Orchestratia hub is running",
    "",
    ...rows.map(([l, v]) => l.padEnd(label) + v),
    "",
    "Next: the walkthrough in README.md. Ctrl-C stops the hub; its data stays in .wrangler/state.",
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const bar = "─".repeat(width + 2);
  console.log(`\n┌${bar}┐\n${lines.map((l) => `│ ${l.padEnd(width)} │`).join("\n")}\n└${bar}┘`);
}

/** Runs a step quietly, showing its output only when it fails. */
function quietly(what, command, args, env = {}) {
  const run = spawnSync(command, args, { cwd: root, encoding: "utf8", env: { ...process.env, ...env } });
  if (run.status !== 0 || verbose) process.stdout.write(`${run.stdout ?? ""}${run.stderr ?? ""}`);
  if (run.status !== 0) {
    console.error(`✗ ${what} failed`);
    process.exit(run.status ?? 1);
  }
  return run.stdout ?? "";
}

/** Passes a child's stream through the filter, line by line. */
function relay(stream, out, filter) {
  createInterface({ input: stream }).on("line", (line) => {
    if (filter.show(line)) out.write(`${line}\n`);
  });
}

const vars = ensureDevVars();
const built = quietly("building the dashboard", process.execPath, [`${root}scripts/build-web.mjs`]);
console.log(`• ${built.trim().split("\n").at(-1)}`);
// Every shard (the directory DB, then DB_1…) gets every migration.
for (const binding of shardBindings(readFileSync(`${root}wrangler.toml`, "utf8"))) {
  const migrated = quietly(`applying the D1 migrations to ${binding}`, wrangler, ["d1", "migrations", "apply", binding, "--local"], { CI: "true" });
  const applied = migrated.match(/About to apply (\d+) migration/)?.[1];
  console.log(`• D1 migrations of ${binding}: ${applied ? `${applied} applied` : "up to date"}`);
}

console.log(`• starting wrangler dev on port ${port}${verbose ? "" : " (VERBOSE=1 npm start shows all of its output)"}`);
// A line per request is production's trail; locally only warnings and errors, unless asked (LOG_LEVEL=info npm start).
const logLevel = process.env.LOG_LEVEL ?? (verbose ? "info" : "warn");
const child = spawn(wrangler, ["dev", "--port", port, "--local", "--show-interactive-dev-session=false", "--var", `LOG_LEVEL:${logLevel}`], {
  cwd: root,
  stdio: ["ignore", verbose ? "inherit" : "pipe", verbose ? "inherit" : "pipe"],
});
if (!verbose) {
  const filter = devOutputFilter();
  relay(child.stdout, process.stdout, filter);
  relay(child.stderr, process.stderr, filter);
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

try {
  await waitForHub(child);
  const session = await devAdminSession(vars);
  const token = await post("/api/v1/servers/tokens", { name: "npm start", max_uses: 10, expires_in_seconds: 86400 }, session.access_token);
  if (token.status !== 201) throw new Error(`could not create a registration token: ${token.json.detail ?? token.status}`);
  printBox(vars, token.json);
} catch (e) {
  console.error(`✗ ${e.message}`);
}
