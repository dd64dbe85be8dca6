/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent`
 * a request carries is kept on what it creates, so work can be followed
 * across agents; where none came, the hub begins a trace. Pure.
 */

/** version-traceid-parentid-flags, lower-case hex; all-zero ids are invalid. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export interface TraceContext {
  traceparent: string;
  traceId: string;
  spanId: string;
}

/** The header's trace context, or null when it is not a valid traceparent (the spec says to ignore it then). */
export function parseTraceparent(header: string | null | undefined): TraceContext | null {
  const m = header ? TRACEPARENT.exec(header.trim()) : null;
  if (!m) return null;
  const [, version, traceId, spanId, , rest] = m;
  // Version ff is forbidden; version 00 has nothing after the flags.
  if (version === "ff" || (version === "00" && rest) || /^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return null;
  return { traceparent: `${version}-${traceId}-${spanId}-${m[4]}`, traceId: traceId!, spanId: spanId! };
}

const hex = (bytes: number) => [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A trace context for an existing trace id (e.g. a task-format observability.traceId), or a new trace. */
export function beginTrace(traceId?: string | null): TraceContext {
  const id = traceId && /^[0-9a-f]{32}$/.test(traceId) && !/^0+$/.test(traceId) ? traceId : hex(16);
  const spanId = hex(8);
  return { traceparent: `00-${id}-${spanId}-01`, traceId: id, spanId };
}
