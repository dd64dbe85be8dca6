#!/usr/bin/env node
/**
 * `npm run deploy`: from a Cloudflare account wrangler is signed in to (`npx wrangler login`) to a working hub, and
 * safe to run again. Creates the D1 database and the R2 bucket when missing (writing the database's id into
 * wrangler.toml), applies the migrations, builds the dashboard, deploys with the secrets the Worker lacks, and
 * bootstraps the first admin. Prints no secret but the admin's password, once, when it creates the admin.
 *
 * The decisions are in deploy-plan.mjs (tested without an account); this file only runs wrangler and reads its answers.
 *   ADMIN_EMAIL=you@example.com npm run deploy    (default: admin@<the hub's host>)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  bootstrapOutcome,
  bucketName,
  bucketNamesFromList,
  databaseIdFromList,
  databaseSettings,
  hubUrlFromOutputFile,
  randomSecret,
  secretNamesFromList,
  secretsToUpload,
  shardBindings,
  withDatabaseId,
} from "./deploy-plan.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const configPath = path.join(root, "wrangler.toml");
const wranglerBin = path.join(root, "node_modules", ".bin", "wrangler");

const step = (text) => console.log(`• ${text}`);

/** Runs wrangler, its output captured (for commands whose answer is read) or shown (for the long ones). */
function wrangler(args, { show = false, env = {} } = {}) {
  const run = spawnSync(wranglerBin, args, {
    cwd: root,
    encoding: "utf8",
    stdio: show ? "inherit" : ["inherit", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  if (run.error) throw run.error;
  return { status: run.status ?? 1, stdout: run.stdout ?? "", stderr: run.stderr ?? "" };
}

function mustSucceed(result, what) {
  if (result.status !== 0) {
    throw new Error(`${what} failed:\n${`${result.stdout}\n${result.stderr}`.trim()}`);
  }
  return result;
}

/** Every shard's database (the directory `DB`, then `DB_1`…), created when missing; its id written into wrangler.toml. */
function ensureDatabase(binding) {
  const toml = readFileSync(configPath, "utf8");
  const db = databaseSettings(toml, binding);
  const listed = () => databaseIdFromList(mustSucceed(wrangler(["d1", "list", "--json"]), "wrangler d1 list").stdout, db.name);
  let id = listed();
  if (id) {
    step(`D1 database ${db.name} exists`);
  } else {
    mustSucceed(wrangler(["d1", "create", db.name]), `wrangler d1 create ${db.name}`);
    id = listed();
    if (!id) throw new Error(`created D1 database ${db.name}, but wrangler d1 list does not show it`);
    step(`created D1 database ${db.name}`);
  }
  if (db.id !== id) {
    writeFileSync(configPath, withDatabaseId(toml, id, binding));
    step(`wrote its id into wrangler.toml (${id}): commit it with your deployment`);
  }
}

function ensureBucket() {
  const name = bucketName(readFileSync(configPath, "utf8"));
  const names = bucketNamesFromList(mustSucceed(wrangler(["r2", "bucket", "list"]), "wrangler r2 bucket list").stdout);
  if (names.includes(name)) {
    step(`R2 bucket ${name} exists`);
    return;
  }
  mustSucceed(wrangler(["r2", "bucket", "create", name]), `wrangler r2 bucket create ${name}`);
  step(`created R2 bucket ${name}`);
}

/** Deploys with the secrets the Worker lacks, from a file only this user can read, removed straight after. */
function deployWithSecrets() {
  const existing = secretNamesFromList(wrangler(["secret", "list"]));
  const secrets = secretsToUpload(existing);
  const dir = mkdtempSync(path.join(tmpdir(), "orchestratia-deploy-"));
  try {
    const secretsFile = path.join(dir, "secrets.json");
    const outputFile = path.join(dir, "output.ndjson");
    writeFileSync(secretsFile, JSON.stringify(secrets), { mode: 0o600 });
    step(`deploying (setting ${Object.keys(secrets).join(", ")})`);
    mustSucceed(wrangler(["deploy", "--secrets-file", secretsFile], { show: true, env: { WRANGLER_OUTPUT_FILE_PATH: outputFile } }), "wrangler deploy");
    const hub = hubUrlFromOutputFile(readFileSync(outputFile, "utf8"));
    if (!hub) throw new Error("deployed, but wrangler reported no https address for the Worker (is workers.dev enabled?)");
    return { hub, bootstrapToken: secrets.BOOTSTRAP_TOKEN };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates the first admin; a new workers.dev address can take a little while to answer. */
async function bootstrapAdmin(hub, bootstrapToken) {
  const email = process.env.ADMIN_EMAIL || `admin@${new URL(hub).hostname}`;
  const password = randomSecret(18);
  const deadline = Date.now() + 90_000;
  for (;;) {
    let res;
    try {
      res = await fetch(`${hub}/api/v1/auth/bootstrap`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${bootstrapToken}` },
        body: JSON.stringify({ email, password, name: "Admin" }),
      });
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`the hub at ${hub} did not answer: ${e instanceof Error ? e.message : e}`);
    }
    if (res) {
      const outcome = bootstrapOutcome(res.status, await res.json().catch(() => null));
      if (outcome.kind === "created") return { email, password };
      if (outcome.kind === "exists") return null;
      // 404 and 5xx: the new address is not serving this Worker yet.
      if ((res.status !== 404 && res.status < 500) || Date.now() > deadline) throw new Error(`bootstrap refused: ${outcome.reason}`);
    }
    await new Promise((r) => setTimeout(r, 3000));
  }
}

try {
  // Every shard holds every table: the same migrations go to each (the directory's tables stay empty on the others).
  const shards = shardBindings(readFileSync(configPath, "utf8"));
  for (const binding of shards) ensureDatabase(binding);
  ensureBucket();
  for (const binding of shards) {
    step(`applying D1 migrations to ${binding}`);
    mustSucceed(wrangler(["d1", "migrations", "apply", binding, "--remote"], { show: true, env: { CI: "true" } }), `migrations of ${binding}`);
  }
  step("building the dashboard");
  const build = spawnSync(process.execPath, [path.join(root, "scripts", "build-web.mjs")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) throw new Error("building the dashboard failed");
  const { hub, bootstrapToken } = deployWithSecrets();
  const admin = await bootstrapAdmin(hub, bootstrapToken);
  console.log(`\nThe hub is at ${hub}  (API reference: ${hub}/docs)`);
  if (admin) {
    console.log(`Admin: ${admin.email}\nPassword (shown this once): ${admin.password}`);
  } else {
    console.log("An admin exists already: sign in with it.");
  }
} catch (e) {
  console.error(`✗ ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
