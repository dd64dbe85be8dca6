/**
 * A finished task as an OpenTelemetry span (pure but for hashing): what the
 * telemetry export sends a project's collector. Decided here:
 * - the trace is the task's own W3C trace (tasks.trace_id, the trace of its
 *   traceparent), so the span joins what the caller and the agents traced;
 * - the span's parent is the span the task's traceparent names (the request
 *   that created it, or the one the hub began for it), and its own id is
 *   derived from the task's id and how often it was retried: the traceparent's
 *   span is its creator's, not its own, and deriving it lets a dependent task
 *   link to its upstream's span without asking anything of it;
 * - status changes are span events, dependencies are links to the upstream
 *   tasks' spans; title, type, priority, status, server, session and usage are
 *   always sent, the spec, the result's summary, a failure's message and a
 *   cancellation's reason only where the project opts in (`include_content`).
 */
import type { UsageAmounts } from "../../domain/usage";
import { SpanKind, SpanStatusCode, type Attributes, type HrTime, type Link, type SpanContext, type SpanStatus } from "@opentelemetry/api";
import type { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { parseTraceparent } from "../../protocol/trace-context";
import { cutText } from "../../domain/text";

/** The events that finish a task (done, failed, cancelled): each is owed its span. */
export const SPAN_ENDING_EVENTS = ["task_completed", "task_failed", "task_cancelled"] as const;

/** Span events a span keeps at most (the SDK's default limit): the latest ones, the others counted as dropped. */
export const MAX_SPAN_EVENTS = 128;
/** Longest text attribute sent (the spec, a result's summary), in UTF-16 units. */
export const MAX_TEXT_ATTRIBUTE = 16_384;

/** What the serializer takes: the SDK's ReadableSpan, of which it reads the fields below. */
export type TaskSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/** A task as D1 holds it, with the names of its server and session. */
export interface TaskRecord {
  id: string;
  project_id: string;
  title: string;
  spec: string;
  type: string;
  priority: string;
  status: string;
  result: string | null;
  error: string | null;
  error_code: string | null;
  trace_id: string | null;
  traceparent: string | null;
  retry_count: number;
  context: string | null;
  created_at: string;
  completed_at: string | null;
  updated_at: string;
  server_id: string | null;
  server_name: string | null;
  session_id: string | null;
  session_name: string | null;
  agent_type: string | null;
}

/** An event of the task that changed its status. */
export interface StatusChange {
  seq: number;
  type: string;
  status: string;
  previous_status: string | null;
  created_at: string;
}

/** A task this one depends on, as its span is named. */
export interface Upstream {
  task_id: string;
  dependency_type: string;
  contract_key: string | null;
  trace_id: string | null;
  traceparent: string | null;
  retry_count: number;
}

/** The task's usage roll-up (domain/usage.ts), as its span's attributes carry it. */
export type UsageTotals = UsageAmounts;

export interface SpanSource {
  task: TaskRecord;
  changes: StatusChange[];
  upstream: Upstream[];
  usage: UsageTotals | null;
  project: { id: string; name: string };
  includeContent: boolean;
  hubVersion: string;
}

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** A task's span id: the first 8 bytes of SHA-256 over its id and retry count (never all zero, which W3C forbids). */
export async function spanIdOf(taskId: string, retryCount: number): Promise<string> {
  const id = hex((await digest(`orchestratia task span:${taskId}:${retryCount}`)).subarray(0, 8));
  return /^0+$/.test(id) ? "0000000000000001" : id;
}

/** The task's trace id: the one kept on it, else its traceparent's, else one derived from its id (tasks from before traces). */
export async function traceIdOf(task: { id: string; trace_id: string | null; traceparent: string | null }): Promise<string> {
  if (task.trace_id && /^[0-9a-f]{32}$/.test(task.trace_id)) return task.trace_id;
  const parent = parseTraceparent(task.traceparent);
  if (parent) return parent.traceId;
  return hex((await digest(`orchestratia task trace:${task.id}`)).subarray(0, 16));
}

/** An ISO-8601 time as OpenTelemetry's [seconds, nanoseconds]. */
export function hrTimeOf(iso: string): HrTime {
  const ms = Date.parse(iso);
  const at = Number.isFinite(ms) ? ms : 0;
  return [Math.floor(at / 1000), (at % 1000) * 1_000_000];
}

const parsed = (json: string | null): Record<string, unknown> | null => {
  if (!json) return null;
  try {
    const value = JSON.parse(json) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** What a result says in brief: its `summary`, else the whole result as JSON. */
function resultSummary(result: string | null): string | null {
  const value = parsed(result);
  if (!value) return result;
  return typeof value.summary === "string" ? value.summary : JSON.stringify(value);
}

function statusOf(task: TaskRecord, includeContent: boolean): SpanStatus {
  if (task.status === "done") return { code: SpanStatusCode.OK };
  if (task.status !== "failed") return { code: SpanStatusCode.UNSET };
  const error = parsed(task.error);
  const message = includeContent && typeof error?.message === "string" ? error.message : (task.error_code ?? "the task failed");
  return { code: SpanStatusCode.ERROR, message: cutText(message, MAX_TEXT_ATTRIBUTE, "…") };
}

/** Attributes that are set, without the ones that have no value. */
const defined = (entries: Record<string, string | number | boolean | null | undefined>): Attributes =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== null && v !== undefined)) as Attributes;

function attributesOf(source: SpanSource, cancelReason: string | null): Attributes {
  const { task, usage, includeContent } = source;
  const context = parsed(task.context);
  return defined({
    "orchestratia.task_id": task.id,
    "orchestratia.project_id": task.project_id,
    "orchestratia.type": task.type,
    "orchestratia.priority": task.priority,
    "orchestratia.status": task.status,
    "orchestratia.server": task.server_name,
    "orchestratia.server_id": task.server_id,
    "orchestratia.session": task.session_id,
    "orchestratia.session_name": task.session_name,
    "orchestratia.agent_type": task.agent_type,
    "orchestratia.retry_count": task.retry_count,
    "orchestratia.error_code": task.status === "failed" ? task.error_code : null,
    "orchestratia.cancelled": task.status === "cancelled" ? true : null,
    "orchestratia.parent_task_id": typeof context?.parentTaskId === "string" ? context.parentTaskId : null,
    ...(usage
      ? {
          "orchestratia.usage.input_tokens": usage.input_tokens,
          "orchestratia.usage.output_tokens": usage.output_tokens,
          "orchestratia.usage.cache_read_tokens": usage.cache_read_tokens,
          "orchestratia.usage.cache_write_tokens": usage.cache_write_tokens,
          "orchestratia.usage.cost_usd": usage.cost_usd,
          "orchestratia.usage.api_ms": usage.api_ms,
        }
      : {}),
    ...(includeContent
      ? {
          "orchestratia.spec": cutText(task.spec, MAX_TEXT_ATTRIBUTE, "…"),
          "orchestratia.result.summary": task.status === "done" ? cutOrNull(resultSummary(task.result)) : null,
          "orchestratia.cancel_reason": cutOrNull(cancelReason),
        }
      : {}),
  });
}

const cutOrNull = (text: string | null) => (text === null ? null : cutText(text, MAX_TEXT_ATTRIBUTE, "…"));

/** The span of a finished task. */
export async function taskSpan(source: SpanSource, cancelReason: string | null = null): Promise<TaskSpan> {
  const { task, changes, upstream, project } = source;
  const traceId = await traceIdOf(task);
  const context: SpanContext = { traceId, spanId: await spanIdOf(task.id, task.retry_count), traceFlags: 1 };
  const parent = parseTraceparent(task.traceparent);
  const kept = changes.slice(-MAX_SPAN_EVENTS);
  const links: Link[] = [];
  for (const up of upstream) {
    links.push({
      context: {
        traceId: await traceIdOf({ id: up.task_id, trace_id: up.trace_id, traceparent: up.traceparent }),
        spanId: await spanIdOf(up.task_id, up.retry_count),
        traceFlags: 1,
      },
      attributes: defined({
        "orchestratia.task_id": up.task_id,
        "orchestratia.dependency_type": up.dependency_type,
        "orchestratia.contract_key": up.contract_key,
      }),
    });
  }
  const startTime = hrTimeOf(task.created_at);
  const endTime = hrTimeOf(task.completed_at ?? changes.at(-1)?.created_at ?? task.updated_at);
  const durationNs = Math.max(0, (endTime[0] - startTime[0]) * 1e9 + (endTime[1] - startTime[1]));
  return {
    name: task.title,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    // The parent is in the task's trace only when the traceparent says that trace (it always does, but for rows from before).
    ...(parent && parent.traceId === traceId ? { parentSpanContext: { traceId, spanId: parent.spanId, traceFlags: 1 } } : {}),
    startTime,
    endTime,
    duration: [Math.floor(durationNs / 1e9), durationNs % 1e9],
    ended: true,
    status: statusOf(task, source.includeContent),
    attributes: attributesOf(source, cancelReason),
    links,
    events: kept.map((e) => ({
      name: e.type,
      time: hrTimeOf(e.created_at),
      attributes: defined({ "orchestratia.seq": e.seq, "orchestratia.status": e.status, "orchestratia.previous_status": e.previous_status }),
    })),
    // The serializer reads a resource's attributes and schema URL only; the SDK's Resource class is not needed to say them.
    resource: {
      attributes: {
        "service.name": "orchestratia-hub",
        "service.version": source.hubVersion,
        "orchestratia.project_id": project.id,
        "orchestratia.project_name": project.name,
      },
    } as unknown as TaskSpan["resource"],
    instrumentationScope: { name: "orchestratia-hub", version: source.hubVersion },
    droppedAttributesCount: 0,
    droppedEventsCount: changes.length - kept.length,
    droppedLinksCount: 0,
  };
}
