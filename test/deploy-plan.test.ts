import { describe, expect, it } from "vitest";
import {
  PLACEHOLDER_DATABASE_ID,
  bootstrapOutcome,
  bucketName,
  bucketNamesFromList,
  databaseIdFromList,
  databaseSettings,
  shardBindings,
  hubUrlFromOutputFile,
  randomSecret,
  secretNamesFromList,
  secretsToUpload,
  withDatabaseId,
} from "../scripts/deploy-plan.mjs";

// The shape of the project's wrangler.toml: the D1 block between others, its id still the placeholder.
const toml = `name = "orchestratia-hub"
main = "src/index.ts"

[vars]
PUBLIC_URL = ""

[[d1_databases]]
binding = "OTHER"
database_name = "elsewhere"
database_id = "11111111-1111-1111-1111-111111111111"

[[d1_databases]]
binding = "DB"
database_name = "orchestratia"
database_id = "${PLACEHOLDER_DATABASE_ID}"
migrations_dir = "migrations"

[[r2_buckets]]
binding = "BLOBS"
bucket_name = "orchestratia-blobs"

[[migrations]]
tag = "v1"
`;
const realId = "6b1e2f0a-58c4-4c9e-9d2a-0f4b3c2d1e0f";

describe("npm run deploy's decisions", () => {
  it("reads the DB binding's database and sees the placeholder id", () => {
    expect(databaseSettings(toml)).toEqual({ name: "orchestratia", id: PLACEHOLDER_DATABASE_ID, placeholder: true });
    expect(databaseSettings(toml, "OTHER")).toEqual({ name: "elsewhere", id: "11111111-1111-1111-1111-111111111111", placeholder: false });
    expect(() => databaseSettings(toml, "NOPE")).toThrow(/binding = "NOPE"/);
  });

  it("writes the real id into the DB block only, leaving the rest byte for byte", () => {
    const patched = withDatabaseId(toml, realId);
    expect(databaseSettings(patched)).toEqual({ name: "orchestratia", id: realId, placeholder: false });
    expect(patched).toBe(toml.replace(PLACEHOLDER_DATABASE_ID, realId));
    expect(patched.match(/\[\[d1_databases\]\]/g)).toHaveLength(2);
    // Running again changes nothing.
    expect(withDatabaseId(patched, realId)).toBe(patched);
    expect(() => withDatabaseId(toml, "not-an-id")).toThrow(/not a D1 database id/);
  });

  it("lists the shards' bindings (DB, then DB_1…) among wrangler.toml's databases, each with its own placeholder", () => {
    const sharded = `${toml}\n[[d1_databases]]\nbinding = "DB_1"\ndatabase_name = "orchestratia-shard-1"\ndatabase_id = "00000000-0000-0000-0000-000000000001"\n`;
    expect(shardBindings(sharded)).toEqual(["DB", "DB_1"]);
    expect(databaseSettings(sharded, "DB_1")).toEqual({ name: "orchestratia-shard-1", id: "00000000-0000-0000-0000-000000000001", placeholder: true });
    const patched = withDatabaseId(sharded, realId, "DB_1");
    expect(databaseSettings(patched, "DB_1").id).toBe(realId);
    expect(databaseSettings(patched).id).toBe(PLACEHOLDER_DATABASE_ID);
  });

  it("adds database_id to a block that has none", () => {
    const without = toml.replace(`database_id = "${PLACEHOLDER_DATABASE_ID}"\n`, "");
    expect(databaseSettings(without).placeholder).toBe(true);
    expect(databaseSettings(withDatabaseId(without, realId)).id).toBe(realId);
  });

  it("finds the database in `wrangler d1 list --json`, around whatever else wrangler printed", () => {
    const listed = `▲ [WARNING] something unrelated\n[\n  {"uuid": "${realId}", "name": "orchestratia", "version": "production"},\n  {"uuid": "x", "name": "other"}\n]\n`;
    expect(databaseIdFromList(listed, "orchestratia")).toBe(realId);
    expect(databaseIdFromList("[]", "orchestratia")).toBeNull();
    expect(() => databaseIdFromList("✘ [ERROR] Not logged in.", "orchestratia")).toThrow(/expected JSON/);
  });

  it("reads bucket names from `wrangler r2 bucket list`", () => {
    expect(bucketName(toml)).toBe("orchestratia-blobs");
    const listed =
      "Listing buckets...\n\u001b[37mname:\u001b[39m           \u001b[90morchestratia-blobs\u001b[39m\ncreation_date:  2026-11-23T10:00:00.000Z\n\nname:           orchestratia-blobs-old\ncreation_date:  2026-01-01T00:00:00.000Z\n";
    expect(bucketNamesFromList(listed)).toEqual(["orchestratia-blobs", "orchestratia-blobs-old"]);
    expect(bucketNamesFromList("Listing buckets...\n")).toEqual([]);
  });

  it("takes a Worker that does not exist yet as having no secrets, and any other failure as a failure", () => {
    expect(secretNamesFromList({ status: 0, stdout: '[\n  {"name": "JWT_SECRET", "type": "secret_text"}\n]', stderr: "" })).toEqual(["JWT_SECRET"]);
    const notFound = '✘ [ERROR] Worker "orchestratia-hub" not found.\n\nIf this is a new Worker, run `wrangler deploy` first to create it.';
    expect(secretNamesFromList({ status: 1, stdout: "", stderr: notFound })).toEqual([]);
    expect(() => secretNamesFromList({ status: 1, stdout: "", stderr: "✘ [ERROR] You are not authenticated." })).toThrow(/not authenticated/);
  });

  it("keeps JWT_SECRET and DATA_KEY once set, and always brings a fresh BOOTSTRAP_TOKEN", () => {
    let n = 0;
    const generate = (bytes: number) => `s${++n}-${bytes}`;
    expect(secretsToUpload([], generate)).toEqual({ BOOTSTRAP_TOKEN: "s1-32", JWT_SECRET: "s2-48", DATA_KEY: "s3-32" });
    expect(Object.keys(secretsToUpload(["JWT_SECRET", "DATA_KEY", "BOOTSTRAP_TOKEN"]))).toEqual(["BOOTSTRAP_TOKEN"]);
    expect(Object.keys(secretsToUpload(["DATA_KEY"])).sort()).toEqual(["BOOTSTRAP_TOKEN", "JWT_SECRET"]);
    const secret = randomSecret(48);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{64}$/);
    expect(randomSecret(48)).not.toBe(secret);
  });

  it("takes the hub's address from wrangler's deploy record", () => {
    const output = [
      '{"version":1,"type":"wrangler-session","wrangler_version":"4.164.0"}',
      '{"version":1,"type":"deploy","worker_name":"orchestratia-hub","targets":["example.com/hub/*","https://orchestratia-hub.acme.workers.dev"]}',
      "",
    ].join("\n");
    expect(hubUrlFromOutputFile(output)).toBe("https://orchestratia-hub.acme.workers.dev");
    expect(hubUrlFromOutputFile('{"type":"deploy","targets":["https://hub.example.com/"]}')).toBe("https://hub.example.com");
    expect(hubUrlFromOutputFile('{"type":"deploy","targets":[]}\nnot json')).toBeNull();
  });

  it("reads the bootstrap answer", () => {
    expect(bootstrapOutcome(201, null)).toEqual({ kind: "created" });
    expect(bootstrapOutcome(409, { code: "CONFLICT" })).toEqual({ kind: "exists" });
    expect(bootstrapOutcome(401, { code: "INVALID_TOKEN", detail: "Bad token." })).toEqual({ kind: "failed", reason: "401 INVALID_TOKEN Bad token." });
  });
});
