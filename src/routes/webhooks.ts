/**
 * A project's outbound webhooks (API.md "Webhooks"): members and admins set
 * them up; deliveries are recorded by the project's room with the events and
 * sent by each webhook's own object (src/integrations/webhook-endpoint.ts).
 */
import { and, desc, eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { currentUser, person } from "../middleware/guards";
import { seal } from "../auth/sealed";
import { nowIso } from "../db/client";
import { DELIVERY_STATUSES, deliveryAttempts, outbox, webhooks } from "../db/schema";
import { checkTargetFor } from "../integrations/dns";
import { webhookStub } from "../integrations/client";
import { newWebhookSecret } from "../integrations/webhook-message";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { text } from "../http/fields";
import { fieldError, notFound } from "../http/problem";
import { EVENT_TYPES } from "../domain/event-types";
import { documented, type Operation } from "../openapi/operation";
import {
  attemptView,
  deliverySchema,
  deliveryView,
  deliveryWithAttemptsSchema,
  TEST_DELIVERY_TYPE,
  webhookSchema,
  webhookView,
  webhookWithSecretSchema,
} from "../views/webhooks";

export const webhookRoutes = new Hono<HubEnv>();

/** How long a rotated-out secret keeps signing, so receivers can move to the new one. */
const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;

const eventTypes = z
  .array(z.enum(EVENT_TYPES, "must be an event type of the project's log"))
  .min(1, "must name at least one event type (leave it out for all)")
  .max(EVENT_TYPES.length)
  .refine((types) => new Set(types).size === types.length, "must not repeat an event type");

const createBody = z.object({
  url: text(2048),
  events: eventTypes.nullish(),
  description: text(500).nullish(),
});

const updateBody = z.object({
  url: text(2048).optional(),
  events: eventTypes.nullable().optional(),
  description: text(500).nullable().optional(),
  enabled: z.boolean("must be a boolean").optional(),
});

/** The URL as given, if a webhook may point there (422 naming `url` otherwise). */
async function targetOf(c: HubContext, url: string): Promise<string> {
  const checked = await checkTargetFor(c.env, url);
  if (!checked.ok) throw fieldError("url", checked.message);
  return checked.url.href;
}

async function webhookIn(c: HubContext, projectId: string) {
  const hook = await c.var.db.query.webhooks.findFirst({ where: and(eq(webhooks.id, c.req.param("wid")!), eq(webhooks.projectId, projectId)) });
  if (!hook) throw notFound("Webhook");
  return hook;
}

const deliveriesQuery = z.object({ status: z.enum(DELIVERY_STATUSES).optional() });

/** Every webhook route: people who may change the project (members of it, admins); viewers get 403. */
const webhookOperation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Webhooks", caller: "person" });

const URL_RULES =
  "`url` must be `https` to a public address (422 naming `url` for loopback, private or other special-use addresses, by name or number, unless the hub runs with `WEBHOOK_ALLOW_PRIVATE=true`). ";

/** The project, for people who may change it. */
const writable = (c: HubContext) => projectDataFor(c, c.req.param("id")!, "write");

webhookRoutes.post(
  "/:id/webhooks",
  webhookOperation({
    id: "createWebhook",
    summary: "Add a webhook to the project",
    description:
      URL_RULES +
      "`events` lists the event types to deliver (leave it out or null for all). The answer carries the signing `secret`, shown this once. " +
      "Deliveries follow the Standard Webhooks spec: `POST <url>` with `{type, timestamp, data}` and the `webhook-id`, `webhook-timestamp`, `webhook-signature` headers.",
    body: createBody,
    responses: { 201: webhookWithSecretSchema },
  }),
  person("member"),
  async (c) => {
    const project = await writable(c);
    const body = await readJson(c, createBody);
    const url = await targetOf(c, body.url);
    const secret = newWebhookSecret();
    const now = nowIso();
    const [hook] = await c.var.db
      .insert(webhooks)
      .values({
        id: crypto.randomUUID(),
        projectId: project.id,
        url,
        events: body.events ?? null,
        description: body.description ?? null,
        enabled: true,
        secret: await seal(c.env.DATA_KEY, secret),
        createdBy: currentUser(c).id,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    // The signing secret is shown here and on rotation only (and to a replay of either, from an answer kept sealed).
    c.set("secretResponse", "sealed");
    return c.json({ ...webhookView(hook!), secret }, 201);
  },
);

webhookRoutes.get(
  "/:id/webhooks",
  webhookOperation({
    id: "listWebhooks",
    summary: "The project's webhooks, oldest first",
    responses: { 200: z.object({ webhooks: z.array(webhookSchema) }) },
  }),
  person("member"),
  async (c) => {
    const project = await writable(c);
    const rows = await c.var.db.select().from(webhooks).where(eq(webhooks.projectId, project.id)).orderBy(webhooks.createdAt);
    return c.json({ webhooks: rows.map(webhookView) });
  },
);

webhookRoutes.get(
  "/:id/webhooks/:wid",
  webhookOperation({ id: "getWebhook", summary: "A webhook of the project", responses: { 200: webhookSchema } }),
  person("member"),
  async (c) => c.json(webhookView(await webhookIn(c, (await writable(c)).id))),
);

webhookRoutes.patch(
  "/:id/webhooks/:wid",
  webhookOperation({
    id: "updateWebhook",
    summary: "Update a webhook",
    description:
      "Change a webhook's URL, events or description, or disable or enable it.\n\n" +
      URL_RULES +
      "Fields left out stay as they were; `events: null` delivers every type. Enabling clears `disabled_reason`, and what waited is delivered from where it stopped.",
    body: updateBody,
    responses: { 200: webhookSchema },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const body = await readJson(c, updateBody);
    const url = body.url !== undefined ? await targetOf(c, body.url) : undefined;
    const [updated] = await c.var.db
      .update(webhooks)
      .set({
        ...(url !== undefined ? { url } : {}),
        ...(body.events !== undefined ? { events: body.events } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        // Enabling again clears why the hub had disabled it; what waited is delivered from where it stopped.
        ...(body.enabled !== undefined ? { enabled: body.enabled, disabledReason: body.enabled ? null : hook.disabledReason } : {}),
        updatedAt: nowIso(),
      })
      .where(eq(webhooks.id, hook.id))
      .returning();
    if (updated!.enabled) c.executionCtx.waitUntil(webhookStub(c.env, hook.id).wake());
    return c.json(webhookView(updated!));
  },
);

webhookRoutes.delete(
  "/:id/webhooks/:wid",
  webhookOperation({
    id: "deleteWebhook",
    summary: "Delete a webhook",
    description: "Delete a webhook with the deliveries it still owed.",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    await c.var.db.batch([
      c.var.db.delete(outbox).where(and(eq(outbox.targetKind, "webhook"), eq(outbox.targetId, hook.id))),
      c.var.db.delete(webhooks).where(eq(webhooks.id, hook.id)),
    ]);
    return c.body(null, 204);
  },
);

/** A new secret; the previous one keeps signing (beside it) for a day. */
webhookRoutes.post(
  "/:id/webhooks/:wid/rotate-secret",
  webhookOperation({
    id: "rotateWebhookSecret",
    summary: "Rotate a webhook's secret",
    description:
      "Give a webhook a new signing secret.\n\n" +
      "The answer carries the new `secret`, shown this once. For 24 hours deliveries are signed with the previous secret too (two signatures in `webhook-signature`), " +
      "so the receiver can move over; `previous_secret_expires_at` says until when.",
    responses: { 200: webhookWithSecretSchema },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const secret = newWebhookSecret();
    const previousExpiresAt = new Date(Date.now() + PREVIOUS_SECRET_MS).toISOString();
    const [updated] = await c.var.db
      .update(webhooks)
      // The secret being replaced is taken in the same statement, so concurrent rotations each keep the one before them.
      .set({
        secret: await seal(c.env.DATA_KEY, secret),
        previousSecret: sql`${webhooks.secret}`,
        previousSecretExpiresAt: previousExpiresAt,
        updatedAt: nowIso(),
      })
      .where(eq(webhooks.id, hook.id))
      .returning();
    c.set("secretResponse", "sealed");
    return c.json({ ...webhookView(updated!), secret });
  },
);

/** A `webhook.test` delivery, queued behind whatever the endpoint still owes. */
webhookRoutes.post(
  "/:id/webhooks/:wid/test",
  webhookOperation({
    id: "testWebhook",
    summary: "Queue a `webhook.test` delivery",
    description: "Sent after whatever the endpoint is still owed, like any delivery; follow it in the deliveries.",
    responses: { 202: deliverySchema },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const now = nowIso();
    const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
    await c.var.db.insert(outbox).values({
      id,
      targetKind: "webhook",
      targetId: hook.id,
      projectId: hook.projectId,
      seq: null,
      eventType: TEST_DELIVERY_TYPE,
      payload: { webhook_id: hook.id, message: "A test delivery from the Orchestratia hub" },
      status: "pending",
      nextAttemptAt: now,
      createdAt: now,
    });
    c.executionCtx.waitUntil(webhookStub(c.env, hook.id).wake());
    const row = (await c.var.db.query.outbox.findFirst({ where: eq(outbox.id, id) }))!;
    return c.json(deliveryView(row), 202);
  },
);

webhookRoutes.get(
  "/:id/webhooks/:wid/deliveries",
  webhookOperation({
    id: "listWebhookDeliveries",
    summary: "List deliveries",
    description: "The webhook's last 100 deliveries, newest first.",
    query: deliveriesQuery,
    responses: { 200: z.object({ deliveries: z.array(deliverySchema) }) },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const { status } = readQuery(c, deliveriesQuery);
    const rows = await c.var.db
      .select()
      .from(outbox)
      .where(and(eq(outbox.targetKind, "webhook"), eq(outbox.targetId, hook.id), status ? eq(outbox.status, status) : undefined))
      .orderBy(desc(outbox.createdAt), desc(outbox.seq))
      .limit(100);
    return c.json({ deliveries: rows.map(deliveryView) });
  },
);

async function deliveryIn(c: HubContext, webhookId: string) {
  const row = await c.var.db.query.outbox.findFirst({
    where: and(eq(outbox.id, c.req.param("did")!), eq(outbox.targetKind, "webhook"), eq(outbox.targetId, webhookId)),
  });
  if (!row) throw notFound("Delivery");
  return row;
}

/** One delivery with every attempt at it: when, the status code or error, how long, and for admins the start of the answer. */
webhookRoutes.get(
  "/:id/webhooks/:wid/deliveries/:did",
  webhookOperation({
    id: "getWebhookDelivery",
    summary: "Get a delivery",
    description: "A delivery with every attempt at it. The start of each answer (`response_body`) is shown to admins only.",
    responses: { 200: deliveryWithAttemptsSchema },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const row = await deliveryIn(c, hook.id);
    const attempts = await c.var.db.select().from(deliveryAttempts).where(eq(deliveryAttempts.outboxId, row.id)).orderBy(deliveryAttempts.id);
    const withAnswer = currentUser(c).role === "admin";
    return c.json({ ...deliveryView(row), attempt_log: attempts.map((a) => attemptView(a, withAnswer)) });
  },
);

/** Sends a delivery again (delivered or failed alike), with the same webhook-id. */
webhookRoutes.post(
  "/:id/webhooks/:wid/deliveries/:did/redeliver",
  webhookOperation({
    id: "redeliverWebhookDelivery",
    summary: "Send a delivery again",
    description: "Delivered or failed alike: it becomes pending with its tries counted afresh (its attempt log goes on), and keeps its `webhook-id`.",
    responses: { 202: deliverySchema },
  }),
  person("member"),
  async (c) => {
    const hook = await webhookIn(c, (await writable(c)).id);
    const row = await deliveryIn(c, hook.id);
    const [updated] = await c.var.db
      .update(outbox)
      .set({ status: "pending", attempts: 0, nextAttemptAt: nowIso(), deliveredAt: null })
      .where(eq(outbox.id, row.id))
      .returning();
    c.executionCtx.waitUntil(webhookStub(c.env, hook.id).wake());
    return c.json(deliveryView(updated!), 202);
  },
);
