/** Webhooks, Telegram, and the outbox that delivers to them. */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects, users } from "./people";

/**
 * A project's outbound webhook (API.md "Webhooks"). Its signing secret is kept
 * sealed (src/auth/sealed.ts); after a rotation the previous one keeps signing
 * too until `previousSecretExpiresAt`.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** Event types delivered; null: all of them. */
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    description: text("description"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Why the hub disabled it (an endpoint failing too long), if it did. */
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhooks_project").on(t.projectId, t.enabled)],
);

/** Who a delivery is for: a webhook, a linked Telegram chat, a project's telemetry export (target id: the project's), or a Slack channel (`team:channel`). */
export const OUTBOX_TARGETS = ["webhook", "telegram", "telemetry", "slack"] as const;
export type OutboxTargetKind = (typeof OUTBOX_TARGETS)[number];
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/**
 * What integrations are owed: one row per event a target wants, written in the
 * same batch as the event itself, then delivered by the target's own Durable
 * Object in seq order. The id is the delivery's `webhook-id`, stable across
 * retries.
 */
export const outbox = sqliteTable(
  "outbox",
  {
    id: text("id").primaryKey(),
    targetKind: text("target_kind", { enum: OUTBOX_TARGETS }).notNull(),
    targetId: text("target_id").notNull(),
    projectId: text("project_id").notNull(),
    /** The event's seq in its project; null for a test delivery. */
    seq: integer("seq"),
    eventType: text("event_type").notNull(),
    /** Set only for deliveries that are not an event of the log (tests). */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown> | null>(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at").notNull(),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    deliveredAt: text("delivered_at"),
  },
  (t) => [
    uniqueIndex("outbox_event").on(t.targetKind, t.targetId, t.projectId, t.seq),
    index("outbox_queue").on(t.targetKind, t.targetId, t.status, t.createdAt, t.seq),
  ],
);

/** Every attempt at a delivery: when, the answer's status (or the error) and how long it took. */
export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    outboxId: text("outbox_id")
      .notNull()
      .references(() => outbox.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    /** The start of the answer's body, at most 4 KiB. */
    responseBody: text("response_body"),
    at: text("at").notNull(),
  },
  (t) => [index("delivery_attempts_outbox").on(t.outboxId)],
);

/** A Telegram chat linked to a person: they hear of their projects there and act as themselves. */
export const telegramLinks = sqliteTable("telegram_links", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .unique()
    .references(() => users.id, { onDelete: "cascade" }),
  chatId: text("chat_id").notNull().unique(),
  /** Nothing is sent while muted (`/mute`). */
  muted: integer("muted", { mode: "boolean" }).notNull().default(false),
  /** Projects the person stopped watching (`/watch`); every other project they can see is watched. */
  unwatched: text("unwatched", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  /** Projects whose denied tool calls the person hears of (`/denied`); none unless asked. */
  deniedProjects: text("denied_projects", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: text("created_at").notNull(),
});

/** One-time codes that link a chat (`/start <code>` through the bot's deep link); stored hashed. */
export const telegramLinkCodes = sqliteTable("telegram_link_codes", {
  codeHash: text("code_hash").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  expiresAt: text("expires_at").notNull(),
});

/** The bot as Telegram described it at setup (getMe), so no request asks again. */
export const telegramBot = sqliteTable("telegram_bot", {
  id: integer("id").primaryKey(),
  botInfo: text("bot_info", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  webhookUrl: text("webhook_url").notNull(),
  updatedAt: text("updated_at").notNull(),
});
