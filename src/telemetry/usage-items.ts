/**
 * A decoded export as usage items: each counted data point or event record, with what it counts and the ids that
 * name its session. Items still have to be attributed to a hub session (attribution.ts) to become the room's usage
 * points. Unknown metrics and events are ignored; a point of a usage metric that cannot be counted (no value, a
 * negative one, a temporality the spec forbids) is invalid and reported as rejected. Pure.
 */
import { canonicalJson } from "../domain/canonical-json";
import { USAGE_MEASURES, type UsageAmounts } from "../domain/usage";
import type { AgentType } from "../domain/agent-types";
import { AGENT_SESSION_ATTRIBUTES, agentTypeOfService, HUB_SESSION_ATTRIBUTE, USAGE_EVENTS, USAGE_METRICS, usageEventOf } from "./agent-signals";
import type { Attributes, DecodedExport, LogsResource, MetricsResource } from "./otlp-model";

export interface UsageItem {
  /** The hub session the export names (`orchestratia.session_id`), if it does. */
  hubSessionId: string | null;
  /** The agent's own session id, if the export carries one. */
  agentSessionId: string | null;
  agentType: AgentType | null;
  model: string | null;
  at: string;
  amounts: Partial<UsageAmounts>;
  /** For a cumulative sum: its series, before hashing (metric, point attributes, resource), and when it started. */
  cumulative?: { series: string; startedAt: string };
}

export interface UsageItems {
  items: UsageItem[];
  /** Points of usage metrics that cannot be counted, with the first reason. */
  invalid: number;
  invalidReason: string | null;
}

/** How far from its arrival a point's time may be and still be believed: a late retry, or a clock a little ahead. */
const OLDEST_MS = 30 * 24 * 3600 * 1000;
const NEWEST_MS = 3600 * 1000;

/** An OTLP time (nanoseconds since the epoch) as ISO-8601, or `fallback` when it is unset. */
export function isoOfNanos(ns: bigint, fallback: string): string {
  return ns <= 0n ? fallback : new Date(Number(ns / 1_000_000n)).toISOString();
}

/**
 * When a point or record happened: its time, unless it is unset or implausibly far from `receivedAt` (a clock that is
 * wrong), where the time it arrived stands in, so that it still counts for the task its session is on now.
 */
export function timeOf(ns: bigint, receivedAt: string): string {
  const received = Date.parse(receivedAt);
  const ms = Number(ns / 1_000_000n);
  return ns <= 0n || ms < received - OLDEST_MS || ms > received + NEWEST_MS ? receivedAt : new Date(ms).toISOString();
}

/** When a cumulative series with no start time began: never, so only a value going down reads as a restart. */
const UNKNOWN_START = new Date(0).toISOString();

const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/** The ids naming the session of a point or record, its agent type and model. */
export function who(own: Attributes, resource: Attributes) {
  const pick = (key: string) => text(resource[key]) ?? text(own[key]);
  return {
    hubSessionId: pick(HUB_SESSION_ATTRIBUTE),
    agentSessionId: AGENT_SESSION_ATTRIBUTES.map((k) => text(own[k]) ?? text(resource[k])).find((id) => id !== null) ?? null,
    agentType: agentTypeOfService(resource["service.name"]),
    model: text(own.model),
  };
}

function metricItems(resources: MetricsResource[], receivedAt: string, out: UsageItems) {
  for (const resource of resources)
    for (const metric of resource.metrics) {
      if (!Object.hasOwn(USAGE_METRICS, metric.name) || !metric.sum) continue;
      const measureOf = USAGE_METRICS[metric.name]!;
      for (const point of metric.sum.points) {
        const measure = measureOf(point.attributes);
        if (!measure) continue;
        const reason =
          metric.sum.temporality === "unspecified"
            ? `${metric.name} has no aggregation temporality`
            : !Number.isFinite(point.value) || point.value < 0
              ? `a point of ${metric.name} has no value or a negative one`
              : null;
        if (reason) {
          out.invalid++;
          out.invalidReason ??= reason;
          continue;
        }
        const cumulative = metric.sum.temporality === "cumulative";
        // A zero delta adds nothing; a cumulative zero still sets where its series starts.
        if (!cumulative && point.value === 0) continue;
        out.items.push({
          ...who(point.attributes, resource.attributes),
          at: timeOf(point.timeNs, receivedAt),
          amounts: { [measure]: point.value },
          ...(cumulative && {
            cumulative: {
              series: canonicalJson({ metric: metric.name, point: point.attributes, resource: resource.attributes }),
              startedAt: isoOfNanos(point.startNs, UNKNOWN_START),
            },
          }),
        });
      }
    }
}

function logItems(resources: LogsResource[], receivedAt: string, out: UsageItems) {
  for (const resource of resources)
    for (const record of resource.records) {
      const event = usageEventOf(record, resource.attributes);
      const amounts = event ? USAGE_EVENTS[event]!(record.attributes) : null;
      if (!amounts || USAGE_MEASURES.every((m) => !amounts[m])) continue;
      out.items.push({
        ...who(record.attributes, resource.attributes),
        at: timeOf(record.timeNs > 0n ? record.timeNs : record.observedNs, receivedAt),
        amounts,
      });
    }
}

/** The usage an export carries; `receivedAt` stands in for times the exporter left unset. */
export function usageItemsOf(decoded: DecodedExport, receivedAt: string): UsageItems {
  const out: UsageItems = { items: [], invalid: 0, invalidReason: null };
  if (decoded.signal === "metrics") metricItems(decoded.resources, receivedAt, out);
  else if (decoded.signal === "logs") logItems(decoded.resources, receivedAt, out);
  return out;
}
