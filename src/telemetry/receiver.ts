/**
 * The OTLP/HTTP receiver (API.md "Usage, budgets and telemetry"): `POST /v1/{metrics,logs,traces}` from the coding
 * agents' own OpenTelemetry exporters. In order, and each before anything after it: the content type and declared
 * size (nothing read), the credential (a server's API key or a person's token), the body within its bounds, the
 * decoding, then the usage, attributed to hub sessions and handed to each project's room, which keeps it before the
 * exporter is answered, and the tool decisions, written to the permission log of sessions the hook does not log. Traces carry no usage the hub counts: they are checked and answered, and not kept.
 */
import type { Principal } from "../auth/principal";
import type { UsagePoint } from "../domain/usage";
import { tokenRefusal } from "../auth/token-limits";
import type { HubContext } from "../http/context";
import { Problem, unauthorized } from "../http/problem";
import { API_KEY_PREFIX, bearerToken, rememberedServerForApiKey, signInWithToken } from "../middleware/guards";
import { appendHeader } from "../http/response-headers";
import { roomStub } from "../room/client";
import { logError } from "../runtime/log";
import { attribute } from "./attribution";
import { exportAnswer, PROTOBUF, refusal } from "./otlp-answers";
import { contentCoding, MAX_WIRE_BYTES, readExportBody, tooLarge } from "./otlp-body";
import { decodeExport, MalformedOtlp, type OtlpEncoding } from "./otlp-decode";
import type { OtlpSignal } from "./otlp-model";
import { logToolDecisions } from "./tool-decision-log";
import { toolDecisionsOf } from "./tool-decisions";
import { usageItemsOf } from "./usage-items";

/** How long an exporter waits before sending again an export the hub could not keep (OTLP honours Retry-After). */
const RETRY_AFTER_SECONDS = 5;

function encodingOf(contentType: string | undefined): OtlpEncoding | null {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return type === "application/json" ? "json" : type === PROTOBUF ? "protobuf" : null;
}

/**
 * The caller, by `Authorization: Bearer <credential>` or `X-API-Key: <credential>` (OTEL_EXPORTER_OTLP_HEADERS can
 * send either): a server's API key (`orc_`), or a person's personal access token (`orcpat_`) or access token. A key is
 * answered from this isolate's lookups (at most 30 s old): usage is the only thing it writes here.
 */
async function callerOf(c: HubContext): Promise<Principal> {
  const credential = c.req.header("X-API-Key")?.trim() || bearerToken(c);
  if (!credential) throw unauthorized("Send the server's API key or a personal access token as `Authorization: Bearer <key>` or `X-API-Key: <key>`");
  if (credential.startsWith(API_KEY_PREFIX)) {
    const server = await rememberedServerForApiKey(c, credential);
    if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
    c.set("principal", { kind: "server", server });
  } else await signInWithToken(c, credential);
  const principal = c.var.principal!;
  // Usage is written (and spent against budgets): a read token may not report it.
  const refused = tokenRefusal(principal, "member", "POST");
  if (refused) throw refused;
  return principal;
}

/** Points a room takes in one call: its intake keeps each call's points in one row of its storage. */
const POINTS_PER_CALL = 1_000;

/** Hands a project's points to its room, a call at a time; answers how many were not kept (from the first call that failed). */
async function keepInRoom(c: HubContext, projectId: string, points: UsagePoint[]): Promise<number> {
  for (let i = 0; i < points.length; i += POINTS_PER_CALL) {
    try {
      const { tally } = await roomStub(c.env, projectId).recordUsage(points.slice(i, i + POINTS_PER_CALL));
      // What the room's intake has counted since it started, and the D1 rows its batches wrote for it (`npm run bench -- usage`).
      appendHeader(c, "Server-Timing", `usage;desc="points=${tally.points}, rows written=${tally.rowsWritten}, batches=${tally.batches}"`);
    } catch (e) {
      logError("a project's room did not take telemetry usage", { request_id: c.var.requestId, project_id: projectId }, e);
      return points.length - i;
    }
  }
  return 0;
}

/**
 * Hands each project's points to its room. When nothing could be kept (an agent's export is one project and, nearly
 * always, one call), 503: the exporter sends it all again. When some was kept (a collector's batch across projects, or
 * an export of thousands of points), what was not is answered as rejected, so that no retry counts the rest twice.
 * Answers how many points were not kept.
 */
async function record(c: HubContext, byProject: Map<string, UsagePoint[]>): Promise<number> {
  const projects = [...byProject].filter(([, points]) => points.length > 0);
  const lost = (await Promise.all(projects.map(([projectId, points]) => keepInRoom(c, projectId, points)))).reduce((a, b) => a + b, 0);
  const total = projects.reduce((n, [, points]) => n + points.length, 0);
  if (lost > 0 && lost === total)
    throw new Problem(503, "USAGE_NOT_RECORDED", "The project could not keep this usage just now; send the export again", undefined, {
      "Retry-After": String(RETRY_AFTER_SECONDS),
    });
  return lost;
}

export async function receiveExport(c: HubContext, signal: OtlpSignal): Promise<Response> {
  const encoding = encodingOf(c.req.header("Content-Type"));
  try {
    if (!encoding)
      throw new Problem(415, "UNSUPPORTED_MEDIA_TYPE", "Send the export as `Content-Type: application/json` or `application/x-protobuf`", undefined, {
        Accept: `application/json, ${PROTOBUF}`,
      });
    const coding = contentCoding(c.req.header("Content-Encoding") ?? null);
    if (!coding) throw new Problem(415, "UNSUPPORTED_MEDIA_TYPE", "The only `Content-Encoding` taken is gzip", undefined, { "Accept-Encoding": "gzip" });
    const declared = Number(c.req.header("Content-Length") ?? NaN);
    if (declared > MAX_WIRE_BYTES) throw tooLarge("as sent", MAX_WIRE_BYTES);
    const principal = await callerOf(c);
    const bytes = await readExportBody(c.req.raw, coding);
    const receivedAt = new Date().toISOString();
    const decoded = decodeExport(signal, encoding, bytes);
    const { items, invalid, invalidReason } = usageItemsOf(decoded, receivedAt);
    const attributed = await attribute(c.env, principal, items, receivedAt);
    // Claude Code's tool decisions are the permission log's second source, for sessions the hook does not log.
    const [unkept, logged] = await Promise.all([
      record(c, attributed.byProject),
      logToolDecisions(c, principal, toolDecisionsOf(decoded, receivedAt), receivedAt),
    ]);
    const rejected = invalid + attributed.rejected + logged.rejected;
    const reason = [...new Set([invalidReason, attributed.reason, logged.reason, unkept > 0 ? "part of the usage could not be kept just now" : null])]
      .filter(Boolean)
      .join("; ");
    // What a room did not keep is counted in usage points rather than in points or records of the export: the nearest
    // count there is, for a case only batches across projects or of thousands of points meet.
    return exportAnswer(signal, encoding, rejected + unkept, reason || null);
  } catch (e) {
    if (e instanceof MalformedOtlp) return refusal(new Problem(400, "MALFORMED_EXPORT", e.message), encoding);
    if (e instanceof Problem && e.status < 500) return refusal(e, encoding);
    if (e instanceof Problem && e.status === 503) return refusal(e, encoding);
    throw e;
  }
}
