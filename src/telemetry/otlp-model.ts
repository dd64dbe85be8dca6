/**
 * What the receiver reads of an OTLP export, once decoded (otlp-decode.ts), whichever its encoding: the attributes of
 * each resource, the sums among its metrics and its log records, as plain values. Only what the hub can count is
 * kept; everything else in the request is read, checked by the decoder and left.
 */

/** An attribute's value; arrays, maps and bytes are not kept (no agent puts usage in them). int64 becomes a number. */
export type AttrValue = string | number | boolean;
export type Attributes = Readonly<Record<string, AttrValue>>;

/** The three signals, by their path (`/v1/<signal>`). */
export const OTLP_SIGNALS = ["metrics", "logs", "traces"] as const;
export type OtlpSignal = (typeof OTLP_SIGNALS)[number];

/** A data point of a Sum. Times are nanoseconds since the epoch (0: not set). `value` is NaN when the point has none. */
export interface SumPoint {
  attributes: Attributes;
  startNs: bigint;
  timeNs: bigint;
  value: number;
}

export interface DecodedMetric {
  name: string;
  /**
   * Null for any other kind of metric (gauges, histograms, summaries). `unspecified` is a temporality the spec forbids:
   * such points cannot be counted either way.
   */
  sum: { temporality: "delta" | "cumulative" | "unspecified"; points: SumPoint[] } | null;
}

export interface MetricsResource {
  attributes: Attributes;
  metrics: DecodedMetric[];
}

export interface DecodedLogRecord {
  /** The record's `event_name` field (OTLP 1.5 and later); '' when the exporter left it out. */
  eventName: string;
  /** The body when it is a plain value (agents put the event's name there). */
  body: AttrValue | null;
  attributes: Attributes;
  timeNs: bigint;
  observedNs: bigint;
}

export interface LogsResource {
  attributes: Attributes;
  records: DecodedLogRecord[];
}

export type DecodedExport =
  { signal: "metrics"; resources: MetricsResource[] } | { signal: "logs"; resources: LogsResource[] } | { signal: "traces"; spans: number };
