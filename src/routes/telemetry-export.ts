/**
 * A project's telemetry export (API.md "Usage, budgets and telemetry"):
 * admins point it at an OTLP/HTTP collector, and each task that finishes is
 * sent there as a span by the project's exporter object
 * (src/integrations/telemetry/exporter.ts), recorded in the outbox by the
 * project's room with the event that finished it. The headers (a collector's
 * API key) are kept sealed; only their names are ever answered.
 */
import { and, desc, eq, ne, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { seal, unseal } from "../auth/sealed";
import { nowIso } from "../db/client";
import { outbox, telemetryExports, type TelemetryExportRow } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { text } from "../http/fields";
import { fieldError, notFound } from "../http/problem";
import { telemetryStub } from "../integrations/client";
import { checkTargetFor } from "../integrations/dns";
import { RESERVED_HEADERS, tracesUrl } from "../integrations/telemetry/otlp-request";
import { currentUser, person } from "../middleware/guards";
import { documented, type Operation } from "../openapi/operation";
import { telemetryExportSchema, telemetryExportView } from "../views/telemetry-export";

export const telemetryExportRoutes = new Hono<HubEnv>();

const MAX_HEADERS = 32;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const headers = z.record(z.string(), z.string("must be a string").max(4096, "must be at most 4096 characters")).superRefine((given, ctx) => {
  const names = Object.keys(given);
  if (names.length > MAX_HEADERS) ctx.addIssue({ code: "custom", message: `must name at most ${MAX_HEADERS} headers` });
  const seen = new Set<string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    const issue = (message: string) => ctx.addIssue({ code: "custom", path: [name], message });
    if (!HEADER_NAME.test(name)) issue("must be an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)");
    else if (RESERVED_HEADERS.includes(lower)) issue(`is set by the hub (${RESERVED_HEADERS.join(", ")} cannot be given)`);
    else if (seen.has(lower)) issue("must not repeat a header (names are case-insensitive)");
    else if (/[\r\n\0]/.test(given[name] ?? "")) issue("must not hold a line break or NUL");
    seen.add(lower);
  }
});

const putBody = z.object({
  endpoint: text(2048),
  headers: headers.nullish(),
  include_content: z.boolean("must be a boolean").optional(),
});

const operation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Telemetry", caller: "person" });

/** The project, for admins (404 for one that does not exist). */
const projectOf = (c: HubContext) => projectDataFor(c, c.req.param("id")!, "write");

async function exportOf(c: HubContext, projectId: string): Promise<TelemetryExportRow> {
  const row = await c.var.db.query.telemetryExports.findFirst({ where: eq(telemetryExports.projectId, projectId) });
  if (!row) throw notFound("Telemetry export");
  return row;
}

/** The export as admins see it: the names of its headers, how many spans wait and what last went wrong. */
async function viewOf(c: HubContext, row: TelemetryExportRow) {
  const mine = and(eq(outbox.targetKind, "telemetry"), eq(outbox.targetId, row.projectId));
  const [[pending], [failure]] = await c.var.db.batch([
    c.var.db
      .select({ n: sql<number>`count(*)` })
      .from(outbox)
      .where(and(mine, eq(outbox.status, "pending"))),
    c.var.db
      .select({ error: outbox.lastError })
      .from(outbox)
      .where(and(mine, ne(outbox.status, "delivered"), sql`${outbox.lastError} IS NOT NULL`))
      .orderBy(desc(outbox.createdAt), desc(outbox.seq))
      .limit(1),
  ]);
  const headerNames = row.headers ? Object.keys(JSON.parse(await unseal(c.env.DATA_KEY, row.headers)) as Record<string, string>) : [];
  return telemetryExportView(row, { tracesUrl: tracesUrl(row.endpoint), headerNames, pending: pending?.n ?? 0, lastError: failure?.error ?? null });
}

telemetryExportRoutes.put(
  "/:id/telemetry-export",
  operation({
    id: "putTelemetryExport",
    summary: "Export the project's tasks as OpenTelemetry spans",
    description:
      "Admins only. Each task of the project that finishes (done, failed or cancelled) is sent to the collector as one span, OTLP/HTTP with a protobuf body, " +
      "`POST <endpoint>/v1/traces` (or the endpoint itself when it already ends in `/v1/traces`), in the order the tasks finished, tried again on the webhooks' " +
      "schedule while the collector fails. The span is in the task's W3C trace, its parent the span of the task's `traceparent`; its events are the task's status " +
      "changes, its links the spans of the tasks it depends on.\n\n" +
      "`endpoint` must be `https` to a public address (422 naming `endpoint` otherwise, unless the hub runs with `WEBHOOK_ALLOW_PRIVATE=true`). " +
      "`headers` (such as the collector's API key) are sent with every export, kept sealed and never answered back. " +
      "The spec, the result's summary, a failure's message and a cancellation's reason are sent only with `include_content: true`. " +
      "This replaces the whole export (send the headers again with any change), and starts an export the hub had disabled again: 201 when it was created, 200 when replaced.",
    body: putBody,
    responses: { 200: telemetryExportSchema, 201: telemetryExportSchema },
  }),
  person("admin"),
  async (c) => {
    const project = await projectOf(c);
    const body = await readJson(c, putBody);
    const checked = await checkTargetFor(c.env, body.endpoint);
    if (!checked.ok) throw fieldError("endpoint", checked.message);
    const given = body.headers && Object.keys(body.headers).length > 0 ? body.headers : null;
    const now = nowIso();
    const settings = {
      endpoint: checked.url.href,
      headers: given ? await seal(c.env.DATA_KEY, JSON.stringify(given)) : null,
      includeContent: body.include_content ?? false,
      disabledReason: null,
      updatedAt: now,
    };
    const [row] = await c.var.db
      .insert(telemetryExports)
      .values({ projectId: project.id, ...settings, createdBy: currentUser(c).id, createdAt: now })
      .onConflictDoUpdate({ target: telemetryExports.projectId, set: settings })
      .returning();
    // What waited while it was disabled goes now.
    c.executionCtx.waitUntil(telemetryStub(c.env, project.id).wake());
    return c.json(await viewOf(c, row!), row!.createdAt === now ? 201 : 200);
  },
);

telemetryExportRoutes.get(
  "/:id/telemetry-export",
  operation({
    id: "getTelemetryExport",
    summary: "The project's telemetry export",
    description:
      "Admins only. The export as saved, with the names of its headers (never their values), how many spans wait, and why it was disabled if it was.",
    responses: { 200: telemetryExportSchema },
  }),
  person("admin"),
  async (c) => c.json(await viewOf(c, await exportOf(c, (await projectOf(c)).id))),
);

telemetryExportRoutes.delete(
  "/:id/telemetry-export",
  operation({
    id: "deleteTelemetryExport",
    summary: "Stop exporting the project's tasks",
    description: "Admins only. Stops the export; spans not yet sent are not sent.",
    responses: { 204: { description: "Stopped" } },
  }),
  person("admin"),
  async (c) => {
    const row = await exportOf(c, (await projectOf(c)).id);
    await c.var.db.batch([
      c.var.db.delete(outbox).where(and(eq(outbox.targetKind, "telemetry"), eq(outbox.targetId, row.projectId))),
      c.var.db.delete(telemetryExports).where(eq(telemetryExports.projectId, row.projectId)),
    ]);
    return c.body(null, 204);
  },
);
