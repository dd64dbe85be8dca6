/**
 * Bindings, vars and secrets the Worker runs with (wrangler.toml, .dev.vars,
 * `wrangler secret put`), but the Durable Object namespaces: those are typed
 * by the classes they hold, which themselves run with this environment (see
 * worker-env.ts).
 */
export interface Env {
  /** The directory (people, servers, keys, projects) and the first task shard; more shards are DB_1, DB_2… (src/db/shards.ts). */
  DB: D1Database;
  DB_1?: D1Database;
  /** The shards new projects are placed on, comma-separated bindings; default DB. */
  OPEN_SHARDS?: string;
  BLOBS: R2Bucket;
  LOGIN_LIMITER: RateLimit;
  /** OAuth for MCP clients: registered clients, grants and tokens (src/mcp/oauth.ts). */
  OAUTH_KV: KVNamespace;

  JWT_SECRET: string;
  BOOTSTRAP_TOKEN: string;
  /** Seals secrets the hub must use again (webhook signing secrets); see src/auth/sealed.ts. */
  DATA_KEY?: string;

  PUBLIC_URL: string;
  JWT_ISSUER: string;
  JWT_AUDIENCE: string;
  JWT_JWKS_URL: string;
  JWT_JWKS_ISSUER: string;
  JWT_JWKS_AUDIENCE: string;
  MAX_BODY_BYTES: string;
  /** JSON larger than this (bytes) in results, contract data, specs and plans is moved to R2. */
  INLINE_JSON_BYTES: string;
  /** Comma-separated exact origins whose pages may call /api/* from the browser; empty = none. */
  CORS_ORIGINS: string;
  /** "true" lets webhooks reach loopback and private addresses, and http (local development only). */
  WEBHOOK_ALLOW_PRIVATE?: string;
  /** DNS-over-HTTPS endpoint (JSON API) that webhook host names are resolved with, to refuse private targets. */
  WEBHOOK_DNS_RESOLVER: string;
  /** The Telegram bot (BotFather's token) and the secret Telegram sends back with every update. */
  TELEGRAM_BOT_TOKEN?: string;
  TELEGRAM_WEBHOOK_SECRET?: string;
  /** Telegram's Bot API root; empty for Telegram's own (tests point it at a local fake). */
  TELEGRAM_API_ROOT: string;
  /** Verifies every request Slack sends (X-Slack-Signature); Slack's doors answer 503 without it. */
  SLACK_SIGNING_SECRET?: string;
  /** The Slack app's OAuth client, for the install flow (a pasted bot token needs neither). */
  SLACK_CLIENT_ID?: string;
  SLACK_CLIENT_SECRET?: string;
  /** Slack's Web API root; empty for Slack's own (tests point it at a local fake). */
  SLACK_API_ROOT?: string;
  /** Seconds a task's server may stay silent (no heartbeat, no socket) before the task is taken back; default 300. */
  ASSIGNMENT_LEASE_SECONDS?: string;
  /** Seconds an agent socket's request is answered within (TIMEOUT after); default 30. */
  AGENT_REQUEST_TIMEOUT_SECONDS?: string;
  /** Seconds between the room's pings of its agent sockets; default 30. */
  AGENT_PING_SECONDS?: string;
  /** Seconds an agent socket may stay silent before the room closes it; default 90. */
  AGENT_SILENCE_SECONDS?: string;
  /** Seconds a blocking A2A SendMessage waits for its task to finish or ask something; default 25. */
  A2A_BLOCKING_WAIT_SECONDS?: string;
  /** Days the permission log keeps an entry; default 30. */
  PERMISSION_LOG_DAYS?: string;
  /** Seconds a model reviewer's endpoint is given to answer one review; default 60. */
  CODE_REVIEW_TIMEOUT_SECONDS?: string;
  /** Lowest level logged: debug, info, warn or error; default info (see src/runtime/log.ts). */
  LOG_LEVEL?: string;
}
