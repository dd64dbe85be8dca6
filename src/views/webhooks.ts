import type { deliveryAttempts, outbox, webhooks } from "../db/schema";

/** A webhook as its project's members see it: never its secret. */
export const webhookView = (w: typeof webhooks.$inferSelect) => ({
  id: w.id,
  project_id: w.projectId,
  url: w.url,
  events: w.events,
  description: w.description,
  enabled: w.enabled,
  disabled_reason: w.disabledReason,
  previous_secret_expires_at: w.previousSecret ? w.previousSecretExpiresAt : null,
  created_at: w.createdAt,
  updated_at: w.updatedAt,
});

export const deliveryView = (d: typeof outbox.$inferSelect) => ({
  id: d.id,
  event_type: d.eventType,
  seq: d.seq,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.status === "pending" ? d.nextAttemptAt : null,
  created_at: d.createdAt,
  delivered_at: d.deliveredAt,
});

export const attemptView = (a: typeof deliveryAttempts.$inferSelect) => ({
  attempt: a.attempt,
  status_code: a.statusCode,
  error: a.error,
  duration_ms: a.durationMs,
  response_body: a.responseBody,
  at: a.at,
});
