/**
 * What `npm run deploy` decides, kept apart from the wrangler calls that feed it (scripts/deploy.mjs) so it is tested
 * without a Cloudflare account: reading wrangler.toml and wrangler's answers, and choosing what is missing.
 * No I/O here; crypto.getRandomValues is the one global used.
 */

/** The id wrangler.toml ships with: a real one is written in by the first deploy. */
export const PLACEHOLDER_DATABASE_ID = "00000000-0000-0000-0000-000000000000";

/** Every shard's placeholder: all zeros but the last digits, distinct so that each local database is a file of its own. */
const PLACEHOLDER_PATTERN = /^00000000-0000-0000-0000-0{10}[0-9]{2}$/;

const stripAnsi = (text) => text.replace(/\x1b\[[0-9;]*m/g, "");

/** The `[[table]]` blocks of a TOML text, each with where it starts and ends, so one can be edited in place. */
function arrayTables(toml, table) {
  const header = new RegExp(`^\\[\\[${table.replace(/\./g, "\\.")}\\]\\]\\s*$`, "gm");
  const blocks = [];
  for (let match; (match = header.exec(toml));) {
    const start = match.index;
    const rest = toml.slice(header.lastIndex);
    const next = rest.search(/^\[/m);
    const end = next === -1 ? toml.length : header.lastIndex + next;
    blocks.push({ start, end, text: toml.slice(start, end) });
  }
  return blocks;
}

const stringField = (block, key) => block.match(new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, "m"))?.[1];

/** Shard bindings: the directory's `DB` (also the first task shard), then `DB_1`, `DB_2`… (src/db/shards.ts). */
export const SHARD_BINDING = /^DB(?:_[1-9][0-9]*)?$/;

/** The bindings of wrangler.toml's D1 databases that are the hub's shards, in the order they are declared. */
export function shardBindings(toml) {
  return arrayTables(toml, "d1_databases")
    .map((b) => stringField(b.text, "binding"))
    .filter((binding) => binding && SHARD_BINDING.test(binding));
}

/** The D1 database bound as `binding`: its name, its id, and whether the id is still the placeholder. */
export function databaseSettings(toml, binding = "DB") {
  const block = arrayTables(toml, "d1_databases").find((b) => stringField(b.text, "binding") === binding);
  if (!block) throw new Error(`wrangler.toml has no [[d1_databases]] block with binding = "${binding}"`);
  const name = stringField(block.text, "database_name");
  if (!name) throw new Error(`the [[d1_databases]] block for ${binding} has no database_name`);
  const id = stringField(block.text, "database_id") ?? null;
  return { name, id, placeholder: id === null || PLACEHOLDER_PATTERN.test(id) };
}

/**
 * wrangler.toml with the database id of `binding` set to `id`, everything else byte for byte.
 * (`wrangler d1 create --update-config` writes only JSON configurations; for a TOML one it prints a snippet.)
 */
export function withDatabaseId(toml, id, binding = "DB") {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw new Error(`not a D1 database id: ${id}`);
  const block = arrayTables(toml, "d1_databases").find((b) => stringField(b.text, "binding") === binding);
  if (!block) throw new Error(`wrangler.toml has no [[d1_databases]] block with binding = "${binding}"`);
  const line = /^(\s*database_id\s*=\s*)"[^"]*"/m;
  const text = line.test(block.text) ? block.text.replace(line, `$1"${id}"`) : block.text.replace(/^(\s*database_name\s*=.*)$/m, `$1\ndatabase_id = "${id}"`);
  return toml.slice(0, block.start) + text + toml.slice(block.end);
}

/** The bucket bound as `binding` in wrangler.toml. */
export function bucketName(toml, binding = "BLOBS") {
  const block = arrayTables(toml, "r2_buckets").find((b) => stringField(b.text, "binding") === binding);
  const name = block && stringField(block.text, "bucket_name");
  if (!name) throw new Error(`wrangler.toml has no [[r2_buckets]] block with binding = "${binding}" and a bucket_name`);
  return name;
}

/** The JSON a wrangler command printed, found among whatever else it wrote around it (warnings hold brackets too). */
function jsonIn(output, open, close) {
  const text = stripAnsi(output);
  const end = text.lastIndexOf(close);
  for (let start = text.indexOf(open); start !== -1 && start < end; start = text.indexOf(open, start + 1)) {
    if (start > 0 && text[start - 1] !== "\n") continue;
    try {
      return JSON.parse(text.slice(start, end + 1));
    } catch {
      // not where the JSON starts: try the next line that opens with it
    }
  }
  throw new Error(`expected JSON from wrangler, got: ${text.trim().slice(0, 200)}`);
}

/** The id of the database called `name` in `wrangler d1 list --json`, or null when the account has none of that name. */
export function databaseIdFromList(output, name) {
  const list = jsonIn(output, "[", "]");
  const found = list.find((db) => db.name === name);
  return found ? (found.uuid ?? found.id ?? null) : null;
}

/** Bucket names in `wrangler r2 bucket list`, which prints `name: <bucket>` and `creation_date: …` per bucket. */
export function bucketNamesFromList(output) {
  return stripAnsi(output)
    .split("\n")
    .map((line) => line.match(/^\s*name:\s+(\S+)\s*$/)?.[1])
    .filter(Boolean);
}

/**
 * Secret names from `wrangler secret list` (JSON by default). A Worker that was never deployed has none: wrangler
 * says it is "not found", which is not a failure here. Anything else that failed (not signed in, no network) is.
 */
export function secretNamesFromList({ status, stdout, stderr }) {
  if (status === 0) return jsonIn(stdout, "[", "]").map((s) => s.name);
  const said = stripAnsi(`${stdout}\n${stderr}`);
  if (/Worker "[^"]+".* not found/.test(said)) return [];
  throw new Error(`wrangler secret list failed: ${said.trim().slice(0, 300)}`);
}

/** A random secret of `bytes` bytes, base64url. */
export function randomSecret(bytes = 32) {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/**
 * The secrets this deploy uploads: JWT_SECRET and DATA_KEY only when the Worker lacks them (a new JWT_SECRET signs
 * everyone out, a new DATA_KEY leaves the sealed webhook secrets unreadable), and always a fresh
 * BOOTSTRAP_TOKEN — a Worker's secrets cannot be read back, so a new one is the only way this run can bootstrap the
 * first admin (a run that stopped before bootstrapping is finished by the next), and it does nothing once a user exists.
 */
export function secretsToUpload(existing, generate = randomSecret) {
  const have = new Set(existing);
  const upload = { BOOTSTRAP_TOKEN: generate(32) };
  if (!have.has("JWT_SECRET")) upload.JWT_SECRET = generate(48);
  if (!have.has("DATA_KEY")) upload.DATA_KEY = generate(32);
  return upload;
}

/** The hub's address from the deploy record wrangler writes to WRANGLER_OUTPUT_FILE_PATH (one JSON object a line). */
export function hubUrlFromOutputFile(ndjson) {
  const deploys = ndjson
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      try {
        return JSON.parse(line);
      } catch {
        return null;
      }
    })
    .filter((entry) => entry?.type === "deploy");
  const targets = (deploys.at(-1)?.targets ?? []).filter((t) => typeof t === "string");
  const url = targets.find((t) => /^https:\/\/[^/]+\.workers\.dev\/?$/.test(t)) ?? targets.find((t) => t.startsWith("https://"));
  return url ? url.replace(/\/$/, "") : null;
}

/** What the bootstrap call's answer means for this run. */
export function bootstrapOutcome(status, body) {
  if (status === 201) return { kind: "created" };
  if (status === 409) return { kind: "exists" };
  return { kind: "failed", reason: `${status} ${body?.code ?? ""} ${body?.detail ?? ""}`.trim() };
}
