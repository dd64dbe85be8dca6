/**
 * The telemetry export on the wire: OTLP/HTTP with a protobuf body (the
 * collectors' default), `POST <endpoint>/v1/traces` as the OpenTelemetry
 * exporters' `OTEL_EXPORTER_OTLP_ENDPOINT` is read, or the endpoint itself
 * when it already names the traces path. The body is encoded by the
 * OpenTelemetry project's own serializer, which writes the ids as given.
 */
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { TaskSpan } from "./task-span";

export const TRACES_PATH = "/v1/traces";

/** Where spans are posted for an export endpoint. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith(TRACES_PATH) ? path : `${path}${TRACES_PATH}`;
  return url.href;
}

/**
 * Headers the hub sets itself, which an export's own headers may not replace: the body's framing and type, and
 * what a fetch decides (an `Authorization`, an API key header or any vendor's header is the export's to set).
 */
export const RESERVED_HEADERS = ["content-type", "content-length", "content-encoding", "transfer-encoding", "host", "connection", "te", "upgrade", "trailer"];

/** An ExportTraceServiceRequest with these spans, and the headers to post it with (the export's own after the hub's). */
export function exportRequest(spans: TaskSpan[], headers: Record<string, string>) {
  return {
    body: ProtobufTraceSerializer.serializeRequest(spans)!,
    headers: { "User-Agent": "orchestratia-hub", ...headers, "Content-Type": "application/x-protobuf" },
  };
}
