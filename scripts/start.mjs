#!/usr/bin/env node
/**
 * `npm start`: runs the hub locally with wrangler (local D1, R2 and Durable
 * Objects, kept in .wrangler/state between runs). Creates .dev.vars with fresh
 * secrets when missing, applies the migrations, starts `wrangler dev`, makes
 * sure a development admin exists, and prints credentials that work.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const port = process.env.PORT || "8787";
const hub = `http://localhost:${port}`;
const devVarsPath = `${root}.dev.vars`;
const wrangler = `${root}node_modules/.bin/wrangler`;

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

function printCredentials(vars, session, token) {
  const agentName = "my-laptop";
  console.log(`
────────────────────────────────────────────────────────────────────────
 Orchestratia hub running at ${hub}
 Dashboard           ${hub}/  (sign in with the admin below)

 Development admin   ${vars.DEV_ADMIN_EMAIL}
 Password            ${vars.DEV_ADMIN_PASSWORD}
 Registration token  ${token.token}
                     (${token.max_uses} uses, expires ${token.expires_at})

 Sign in:
   curl -s ${hub}/api/v1/auth/login -H 'Content-Type: application/json' \\
     -d '{"email":"${vars.DEV_ADMIN_EMAIL}","password":"${vars.DEV_ADMIN_PASSWORD}"}'

 Register an agent (or: orchestratia-agent --register <token>):
   curl -s ${hub}/api/v1/servers/register -H 'Content-Type: application/json' \\
     -d '{"name":"${agentName}","hostname":"${agentName}","registration_token":"${token.token}"}'

 Then call the agent API with the returned key:
   curl -s ${hub}/api/v1/server/servers -H 'X-API-Key: orc_...'

 Access token for the admin (15 minutes): ${session.access_token.slice(0, 24)}...
────────────────────────────────────────────────────────────────────────
`);
}

const vars = ensureDevVars();
console.log("• building the dashboard");
execFileSync(process.execPath, [`${root}scripts/build-web.mjs`], { cwd: root, stdio: "inherit" });
console.log("• applying D1 migrations locally");
execFileSync(wrangler, ["d1", "migrations", "apply", "DB", "--local"], { cwd: root, stdio: "inherit", env: { ...process.env, CI: "true" } });

console.log(`• starting wrangler dev on port ${port}`);
const child = spawn(wrangler, ["dev", "--port", port, "--local"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

try {
  await waitForHub(child);
  const session = await devAdminSession(vars);
  const token = await post("/api/v1/servers/tokens", { name: "npm start", max_uses: 10, expires_in_seconds: 86400 }, session.access_token);
  if (token.status !== 201) throw new Error(`could not create a registration token: ${token.json.detail ?? token.status}`);
  printCredentials(vars, session, token.json);
} catch (e) {
  console.error(`✗ ${e.message}`);
}
