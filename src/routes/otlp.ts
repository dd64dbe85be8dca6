/** The OTLP/HTTP receiver's three paths at the hub's origin, where OTEL_EXPORTER_OTLP_ENDPOINT points (src/telemetry/receiver.ts). */
import { Hono } from "hono";
import { z } from "zod";
import type { HubEnv } from "../http/context";
import { documented } from "../openapi/operation";
import { MAX_DECODED_BYTES, MAX_WIRE_BYTES } from "../telemetry/otlp-body";
import { PROTOBUF } from "../telemetry/otlp-answers";
import type { OtlpSignal } from "../telemetry/otlp-model";
import { receiveExport } from "../telemetry/receiver";

export const otlpRoutes = new Hono<HubEnv>({ strict: false });

const WHAT: Record<OtlpSignal, { id: string; request: string; counts: string; rejected: string }> = {
  metrics: {
    id: "otlpExportMetrics",
    request: "ExportMetricsServiceRequest",
    counts:
      "Counted: Claude Code's `claude_code.cost.usage` and `claude_code.token.usage` sums, delta or cumulative (a cumulative " +
      "series, named by its metric, point attributes and resource, is counted once; a new start time counts it afresh). " +
      "Other metrics are taken and ignored.",
    rejected: "rejectedDataPoints",
  },
  logs: {
    id: "otlpExportLogs",
    request: "ExportLogsServiceRequest",
    counts:
      "Counted: Codex's `codex.sse_event` (`response.completed`) tokens and `codex.api_request` API time, Gemini CLI's " +
      "`gemini_cli.api_response` tokens and API time, and Claude Code's `claude_code.api_request` API time (its cost and " +
      "tokens come from its metrics, so they are not counted twice). Other records are taken and ignored.",
    rejected: "rejectedLogRecords",
  },
  traces: {
    id: "otlpExportTraces",
    request: "ExportTraceServiceRequest",
    counts: "Spans are checked and answered, and not kept: the hub counts no usage from them.",
    rejected: "rejectedSpans",
  },
};

/** The JSON answer: empty when all was taken; int64 counts are strings, as the Protobuf JSON mapping writes them. */
const answer = (rejected: string) =>
  z.object({
    partialSuccess: z.object({ [rejected]: z.string().regex(/^\d+$/).optional(), errorMessage: z.string().optional() }).optional(),
  });

for (const signal of ["metrics", "logs", "traces"] as const) {
  const what = WHAT[signal];
  otlpRoutes.post(
    `/v1/${signal}`,
    documented({
      id: what.id,
      tag: "Telemetry",
      summary: `Export ${signal} (OTLP/HTTP)`,
      description:
        `An OTLP/HTTP ${what.request}, as OpenTelemetry exporters send it to \`OTEL_EXPORTER_OTLP_ENDPOINT\`. ${what.counts}\n\n` +
        "Credentials: a server's API key or a person's personal access token with write scope, as `Authorization: Bearer ...` or " +
        "`X-API-Key`, checked before the body is read. Usage goes to the hub session the resource attribute `orchestratia.session_id` " +
        "names, or, without it, to the one the agent's own session id (`session.id`, `conversation.id`) was first sent beside; the " +
        "credential must be that session's server's key, or a token of a person who may change its project. Anything else is rejected " +
        `and counted in the answer's \`partialSuccess.${what.rejected}\` with an \`errorMessage\`.\n\n` +
        `Bodies: \`application/json\` or \`application/x-protobuf\`, optionally \`Content-Encoding: gzip\`; at most ${MAX_WIRE_BYTES} bytes ` +
        `as sent (413 before reading when \`Content-Length\` says more) and ${MAX_DECODED_BYTES} once inflated. The answer comes in the ` +
        "request's encoding; a refusal to a protobuf request is a `google.rpc.Status` in protobuf, to a JSON one a problem document. " +
        "415 for other types or encodings, 400 for a body that does not decode, 503 with `Retry-After` when the project could not keep " +
        "the usage (nothing was kept: exporters send it again).",
      caller: ["agent", "person"],
      headers: {
        "Content-Type": "`application/json` or `application/x-protobuf`",
        "Content-Encoding": "`gzip`, or none",
        "X-API-Key": "The credential, when not sent as `Authorization: Bearer`",
      },
      rawBody: { contentTypes: ["application/json", PROTOBUF], description: `An OTLP ${what.request}` },
      responses: {
        200: {
          description: `The Export${signal === "traces" ? "Trace" : signal === "metrics" ? "Metrics" : "Logs"}ServiceResponse, in the request's encoding`,
          contentType: "application/json",
          schema: answer(what.rejected),
          alsoAs: [PROTOBUF],
        },
      },
      refusalsAlsoAs: [PROTOBUF],
    }),
    (c) => receiveExport(c, signal),
  );
}
