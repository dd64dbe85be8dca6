/** A project's webhooks, their deliveries and the attempts at each, as members see them (API.md "Webhooks"). */
import { z } from "zod";
import { DELIVERY_STATUSES, type deliveryAttempts, type outbox, type webhooks } from "../db/schema";
import { EVENT_TYPES, type EventType } from "../domain/event-types";
import { id, timestamp } from "./fields";

/** The type a test delivery carries (POST …/test); every other delivery is an event of the log. */
export const TEST_DELIVERY_TYPE = "webhook.test";

export const webhookSchema = z
  .object({
    id,
    project_id: id,
    url: z.string().meta({ format: "uri" }),
    events: z.array(z.enum(EVENT_TYPES)).nullable().meta({ description: "The event types delivered; null for all" }),
    description: z.string().nullable(),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().meta({ description: "Why the hub disabled it (its endpoint failed too long); cleared when enabled again" }),
    previous_secret_expires_at: timestamp.nullable().meta({ description: "After a rotation, until when the previous secret signs too (beside the new one)" }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Webhook" });

/** A webhook as its project's members see it: never its secret. */
export const webhookView = (w: typeof webhooks.$inferSelect): z.infer<typeof webhookSchema> => ({
  id: w.id,
  project_id: w.projectId,
  url: w.url,
  // Written only through the routes' schema, which admits event types alone.
  events: w.events as EventType[] | null,
  description: w.description,
  enabled: w.enabled,
  disabled_reason: w.disabledReason,
  previous_secret_expires_at: w.previousSecret ? w.previousSecretExpiresAt : null,
  created_at: w.createdAt,
  updated_at: w.updatedAt,
});

/** The answer that shows the signing secret: at creation and on rotation, never again. */
export const webhookWithSecretSchema = webhookSchema
  .extend({ secret: z.string().meta({ description: "`whsec_…`: the Standard Webhooks signing secret; shown only here" }) })
  .meta({ id: "WebhookWithSecret" });

export const deliverySchema = z
  .object({
    id: z.string().meta({ description: "`msg_…`: the delivery's `webhook-id` header, the same on every attempt" }),
    event_type: z.enum([...EVENT_TYPES, TEST_DELIVERY_TYPE]),
    seq: z.int().nullable().meta({ description: "The event's seq; null for a test delivery" }),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.int().min(0),
    last_status_code: z.int().nullable().meta({ description: "The endpoint's last answer; null before any, or when it gave none" }),
    last_error: z.string().nullable(),
    next_attempt_at: timestamp.nullable().meta({ description: "When it is tried next; null unless pending" }),
    created_at: timestamp,
    delivered_at: timestamp.nullable(),
  })
  .meta({ id: "WebhookDelivery" });

export const deliveryView = (d: typeof outbox.$inferSelect): z.infer<typeof deliverySchema> => ({
  id: d.id,
  // The room records event types of its log, the test route `webhook.test`.
  event_type: d.eventType as z.infer<typeof deliverySchema>["event_type"],
  seq: d.seq,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.status === "pending" ? d.nextAttemptAt : null,
  created_at: d.createdAt,
  delivered_at: d.deliveredAt,
});

export const attemptSchema = z
  .object({
    attempt: z.int().min(1),
    status_code: z.int().nullable().meta({ description: "The endpoint's status; null when it gave no answer" }),
    error: z.string().nullable().meta({ description: "Why the attempt failed (no answer, a non-2xx)" }),
    duration_ms: z.int().min(0),
    response_body: z
      .string()
      .nullable()
      .meta({ description: "The start of the answer's body (at most 4 KiB), for admins only: null for members, and when the endpoint gave none" }),
    at: timestamp,
  })
  .meta({ id: "WebhookDeliveryAttempt" });

/**
 * An attempt; the receiver's answer only for admins. A member chooses where a
 * webhook points, so showing them what answered would let them read whatever
 * the hub can reach and they cannot (an address allowed only to Cloudflare's).
 */
export const attemptView = (a: typeof deliveryAttempts.$inferSelect, withAnswer: boolean): z.infer<typeof attemptSchema> => ({
  attempt: a.attempt,
  status_code: a.statusCode,
  error: a.error,
  duration_ms: a.durationMs,
  response_body: withAnswer ? a.responseBody : null,
  at: a.at,
});

export const deliveryWithAttemptsSchema = deliverySchema
  .extend({ attempt_log: z.array(attemptSchema).meta({ description: "Every attempt, oldest first" }) })
  .meta({ id: "WebhookDeliveryWithAttempts" });
