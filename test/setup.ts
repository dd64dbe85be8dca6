import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Setup files may run more than once; only unapplied migrations are applied.
// Every shard holds every table (src/db/shards.ts): the directory DB and DB_1.
await Promise.all([applyD1Migrations(env.DB, env.TEST_MIGRATIONS), applyD1Migrations(env.DB_1!, env.TEST_MIGRATIONS)]);
