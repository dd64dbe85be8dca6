/**
 * The real OpenTelemetry JS SDK and its OTLP/HTTP exporters (JSON and protobuf), exporting to the hub under test: their
 * fetch transport is pointed at the Worker (every answer held to the API's description), so the bytes on the wire are
 * exactly what the exporters send. Names and attributes are Claude Code's (code.claude.com/docs/en/monitoring-usage).
 */
import type { UsageAmounts } from "../src/domain/usage";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtoLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider } from "@opentelemetry/sdk-logs";
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { env } from "cloudflare:workers";
import { conformingFetch } from "./api-conformance";
import { BASE } from "./helpers";

export type Encoding = "json" | "protobuf";

/** What the hub answered the exports made while `fn` ran: status, content type and body. */
export interface Answer {
  status: number;
  contentType: string | null;
  body: Uint8Array;
}

/** Runs `fn` with the exporters' fetch going to the hub; answers what the hub said to each export. */
export async function exportingToHub(fn: () => Promise<void>): Promise<Answer[]> {
  const answers: Answer[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    // The browser transport's keepalive and mode are for browsers; the request is the rest.
    const res = await conformingFetch(new Request(String(input), { method: init?.method, headers: init?.headers, body: init?.body }));
    const body = new Uint8Array(await res.clone().arrayBuffer());
    answers.push({ status: res.status, contentType: res.headers.get("Content-Type"), body });
    return res;
  }) as typeof fetch;
  try {
    await fn();
  } finally {
    globalThis.fetch = original;
  }
  return answers;
}

/** The resource Claude Code exports with, naming the hub session as the docs tell a user to. */
export const claudeResource = (hubSessionId: string | null, extra: Record<string, string> = {}) =>
  resourceFromAttributes({
    "service.name": "claude-code",
    "service.version": "2.1.200",
    ...(hubSessionId ? { "orchestratia.session_id": hubSessionId } : {}),
    ...extra,
  });

export interface MeterOptions {
  encoding: Encoding;
  credential: string;
  resource: ReturnType<typeof resourceFromAttributes>;
  temporality?: "delta" | "cumulative";
  /** Sent as `X-API-Key` instead of `Authorization: Bearer`. */
  asApiKeyHeader?: boolean;
}

/** A MeterProvider with an OTLP/HTTP exporter to the hub; `flush` exports what was recorded so far. */
export function hubMeter(o: MeterOptions) {
  const headers: Record<string, string> = o.asApiKeyHeader ? { "X-API-Key": o.credential } : { Authorization: `Bearer ${o.credential}` };
  const options = {
    url: `${BASE}/v1/metrics`,
    headers,
    temporalityPreference: o.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE,
  };
  const exporter = o.encoding === "json" ? new JsonMetricExporter(options) : new ProtoMetricExporter(options);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ resource: o.resource, readers: [reader] });
  // Claude Code's meter (the docs' "Meter Name").
  const meter = provider.getMeter("com.anthropic.claude_code");
  return {
    cost: meter.createCounter("claude_code.cost.usage", { unit: "USD" }),
    tokens: meter.createCounter("claude_code.token.usage", { unit: "tokens" }),
    meter,
    flush: () => reader.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/** A LoggerProvider with an OTLP/HTTP log exporter to the hub; `flush` exports the records emitted so far, in one export. */
export function hubLogger(o: Omit<MeterOptions, "temporality">) {
  const headers: Record<string, string> = o.asApiKeyHeader ? { "X-API-Key": o.credential } : { Authorization: `Bearer ${o.credential}` };
  const options = { url: `${BASE}/v1/logs`, headers };
  const exporter = o.encoding === "json" ? new JsonLogExporter(options) : new ProtoLogExporter(options);
  const processor = new BatchLogRecordProcessor({ exporter, scheduledDelayMillis: 3_600_000 });
  const provider = new LoggerProvider({ resource: o.resource, processors: [processor] });
  return { logger: provider.getLogger("com.anthropic.claude_code.events"), flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/** A roll-up row's amounts. */
export type UsageRow = UsageAmounts;

export const taskUsage = (taskId: string) => env.DB.prepare("SELECT * FROM task_usage WHERE task_id = ?").bind(taskId).first<UsageRow>();
export const sessionUsage = (sessionId: string) => env.DB.prepare("SELECT * FROM session_usage WHERE session_id = ?").bind(sessionId).first<UsageRow>();

/** A JSON answer's body. */
export const jsonOf = (a: Answer) => JSON.parse(new TextDecoder().decode(a.body));
