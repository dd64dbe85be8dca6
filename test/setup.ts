import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { shardNames } from "../src/db/shards";

// Setup files may run more than once; only unapplied migrations are applied.
// Every shard holds every table (src/db/shards.ts): the directory DB, DB_1 and DB_2, each by its own binding.
const bindings = env as unknown as Record<string, D1Database>;
await Promise.all(shardNames(env).map((shard) => applyD1Migrations(bindings[shard]!, env.TEST_MIGRATIONS)));
