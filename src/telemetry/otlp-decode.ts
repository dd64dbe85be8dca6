/**
 * Decodes an OTLP/HTTP export body, protobuf or JSON, into what the receiver reads of it (otlp-model.ts). Both
 * encodings go through @bufbuild/protobuf's reflection over the official definitions (otlp-descriptors.ts): binary by
 * the protobuf wire format, JSON by the Protobuf JSON mapping that OTLP/JSON follows (lowerCamelCase or original
 * field names, int64 as a string or a number, enums as integers, unknown fields ignored as the OTLP spec asks). OTLP/JSON
 * writes trace and span ids in hex where the mapping expects base64; the receiver reads no ids, so they are not
 * converted. Pure: no I/O.
 */
import { createFileRegistry, fromBinary, fromJson, type DescMessage, type FileRegistry, type JsonValue } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { OTLP_DESCRIPTOR_SET } from "./otlp-descriptors";
import type { Attributes, AttrValue, DecodedExport, DecodedLogRecord, DecodedMetric, OtlpSignal } from "./otlp-model";

export type OtlpEncoding = "json" | "protobuf";

/** The body is not a valid export of its signal in its encoding; `message` says where it broke. */
export class MalformedOtlp extends Error {}

const PACKAGE = "opentelemetry.proto.collector";
export const REQUEST_TYPES: Record<OtlpSignal, string> = {
  metrics: `${PACKAGE}.metrics.v1.ExportMetricsServiceRequest`,
  logs: `${PACKAGE}.logs.v1.ExportLogsServiceRequest`,
  traces: `${PACKAGE}.trace.v1.ExportTraceServiceRequest`,
};
export const RESPONSE_TYPES: Record<OtlpSignal, string> = {
  metrics: `${PACKAGE}.metrics.v1.ExportMetricsServiceResponse`,
  logs: `${PACKAGE}.logs.v1.ExportLogsServiceResponse`,
  traces: `${PACKAGE}.trace.v1.ExportTraceServiceResponse`,
};

let registry: FileRegistry | undefined;

/** A message type of the OTLP definitions, read once per isolate. */
export function otlpMessage(typeName: string): DescMessage {
  registry ??= createFileRegistry(fromBinary(FileDescriptorSetSchema, base64Decode(OTLP_DESCRIPTOR_SET)));
  const desc = registry.getMessage(typeName);
  if (!desc) throw new Error(`${typeName} is not among the OTLP definitions`);
  return desc;
}

/** metrics.proto `AggregationTemporality`. */
const TEMPORALITY_DELTA = 1;
const TEMPORALITY_CUMULATIVE = 2;

// The decoded messages, as far as the receiver reads them (field names are the definitions' lowerCamelCase).
type Oneof<T extends Record<string, unknown>> = { [K in keyof T]: { case: K; value: T[K] } }[keyof T] | { case: undefined; value?: undefined };
interface PbAnyValue {
  value: Oneof<{
    stringValue: string;
    boolValue: boolean;
    intValue: bigint;
    doubleValue: number;
    arrayValue: unknown;
    kvlistValue: unknown;
    bytesValue: unknown;
  }>;
}
interface PbKeyValue {
  key: string;
  value?: PbAnyValue;
}
interface PbResource {
  attributes: PbKeyValue[];
}
interface PbNumberDataPoint {
  attributes: PbKeyValue[];
  startTimeUnixNano: bigint;
  timeUnixNano: bigint;
  value: Oneof<{ asDouble: number; asInt: bigint }>;
}
interface PbMetric {
  name: string;
  data: Oneof<{
    sum: { dataPoints: PbNumberDataPoint[]; aggregationTemporality: number };
    gauge: unknown;
    histogram: unknown;
    exponentialHistogram: unknown;
    summary: unknown;
  }>;
}
interface PbMetricsRequest {
  resourceMetrics: { resource?: PbResource; scopeMetrics: { metrics: PbMetric[] }[] }[];
}
interface PbLogRecord {
  timeUnixNano: bigint;
  observedTimeUnixNano: bigint;
  body?: PbAnyValue;
  attributes: PbKeyValue[];
  eventName: string;
}
interface PbLogsRequest {
  resourceLogs: { resource?: PbResource; scopeLogs: { logRecords: PbLogRecord[] }[] }[];
}
interface PbTracesRequest {
  resourceSpans: { scopeSpans: { spans: unknown[] }[] }[];
}

function plainValue(v: PbAnyValue | undefined): AttrValue | null {
  switch (v?.value.case) {
    case "stringValue":
    case "boolValue":
    case "doubleValue":
      return v.value.value;
    case "intValue":
      return Number(v.value.value);
    default:
      return null;
  }
}

function attributesOf(list: readonly PbKeyValue[] | undefined): Attributes {
  const out: Record<string, AttrValue> = {};
  for (const kv of list ?? []) {
    const value = plainValue(kv.value);
    if (value !== null) out[kv.key] = value;
  }
  return out;
}

function metricOf(m: PbMetric): DecodedMetric {
  if (m.data.case !== "sum") return { name: m.name, sum: null };
  const { dataPoints, aggregationTemporality: t } = m.data.value;
  return {
    name: m.name,
    sum: {
      temporality: t === TEMPORALITY_DELTA ? "delta" : t === TEMPORALITY_CUMULATIVE ? "cumulative" : "unspecified",
      points: dataPoints.map((p) => ({
        attributes: attributesOf(p.attributes),
        startNs: p.startTimeUnixNano,
        timeNs: p.timeUnixNano,
        value: p.value.case === "asDouble" ? p.value.value : p.value.case === "asInt" ? Number(p.value.value) : NaN,
      })),
    },
  };
}

function recordOf(r: PbLogRecord): DecodedLogRecord {
  return {
    eventName: r.eventName,
    body: plainValue(r.body),
    attributes: attributesOf(r.attributes),
    timeNs: r.timeUnixNano,
    observedNs: r.observedTimeUnixNano,
  };
}

function parse(signal: OtlpSignal, encoding: OtlpEncoding, bytes: Uint8Array): unknown {
  const desc = otlpMessage(REQUEST_TYPES[signal]);
  if (encoding === "protobuf") return fromBinary(desc, bytes, { readUnknownFields: false });
  let json: JsonValue;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)) as JsonValue;
  } catch (e) {
    throw new MalformedOtlp(`The body is not JSON: ${(e as Error).message}`);
  }
  return fromJson(desc, json, { ignoreUnknownFields: true });
}

/** The export as the receiver reads it; MalformedOtlp when the body is not a valid export of `signal`. */
export function decodeExport(signal: OtlpSignal, encoding: OtlpEncoding, bytes: Uint8Array): DecodedExport {
  let message: unknown;
  try {
    message = parse(signal, encoding, bytes);
  } catch (e) {
    if (e instanceof MalformedOtlp) throw e;
    // The library's refusals (a truncated field, a wrong wire type, a string where a number belongs, nesting past its
    // limit) are all about the body.
    throw new MalformedOtlp(`The body is not a valid OTLP ${signal} export (${encoding}): ${(e as Error).message}`);
  }
  switch (signal) {
    case "metrics":
      return {
        signal,
        resources: (message as PbMetricsRequest).resourceMetrics.map((rm) => ({
          attributes: attributesOf(rm.resource?.attributes),
          metrics: rm.scopeMetrics.flatMap((sm) => sm.metrics.map(metricOf)),
        })),
      };
    case "logs":
      return {
        signal,
        resources: (message as PbLogsRequest).resourceLogs.map((rl) => ({
          attributes: attributesOf(rl.resource?.attributes),
          records: rl.scopeLogs.flatMap((sl) => sl.logRecords.map(recordOf)),
        })),
      };
    case "traces":
      return { signal, spans: (message as PbTracesRequest).resourceSpans.reduce((n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0), 0) };
  }
}
