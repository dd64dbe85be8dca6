/**
 * A fake OpenTelemetry collector, run in Node beside the tests on loopback: it
 * takes OTLP/HTTP trace exports at `POST /otlp/{name}/.../v1/traces` and
 * decodes each protobuf body with the OpenTelemetry protobuf definitions
 * (protobufjs code generated from opentelemetry-proto, as
 * `@opentelemetry/otlp-transformer` 0.57 shipped it: a decoder apart from the
 * serializer the hub encodes with), as a collector would. Tests steer it over
 * HTTP: `POST /control/{name}` sets `{status, retryAfter}` and answers what
 * arrived; `GET /control/{name}/wait?count=N` answers once N exports have
 * arrived (or after `timeoutMs`, 30 s by default).
 */
import { createServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    collector: string;
  }
}

/** The generated definitions: CommonJS over protobufjs/minimal. */
const root = createRequire(import.meta.url)("otlp-transformer-057/build/src/generated/root.js");
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

type Attributes = Record<string, unknown>;

/** An AnyValue as a plain value: strings, booleans, numbers (64-bit integers as numbers), lists, maps, bytes in hex. */
function valueOf(v: any): unknown {
  if (!v) return null;
  if (v.stringValue != null) return v.stringValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.intValue != null) return Number(v.intValue.toString());
  if (v.doubleValue != null) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.kvlistValue) return attributesOf(v.kvlistValue.values);
  if (v.bytesValue) return hex(v.bytesValue);
  return null;
}

const attributesOf = (list: any[] | undefined): Attributes => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
const hex = (bytes: Uint8Array | undefined) => (bytes && bytes.length ? Buffer.from(bytes).toString("hex") : "");
const nanos = (n: any) => (n == null ? null : n.toString());

/** A decoded span, its ids in hex and times as nanosecond strings. */
function spanOf(s: any) {
  return {
    traceId: hex(s.traceId),
    spanId: hex(s.spanId),
    parentSpanId: hex(s.parentSpanId),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: nanos(s.startTimeUnixNano),
    endTimeUnixNano: nanos(s.endTimeUnixNano),
    attributes: attributesOf(s.attributes),
    events: (s.events ?? []).map((e: any) => ({ name: e.name, timeUnixNano: nanos(e.timeUnixNano), attributes: attributesOf(e.attributes) })),
    droppedEventsCount: s.droppedEventsCount ?? 0,
    links: (s.links ?? []).map((l: any) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attributes: attributesOf(l.attributes) })),
    status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
  };
}

function decode(body: Buffer) {
  const request = ExportTraceServiceRequest.decode(body);
  return (request.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: any) => ({
        ...spanOf(s),
        resource: attributesOf(rs.resource?.attributes),
        scope: { name: ss.scope?.name, version: ss.scope?.version },
      })),
    ),
  );
}

interface Collector {
  /** Status to answer with; 2xx accepts. */
  status: number;
  /** `Retry-After` to answer a refusal with, if any. */
  retryAfter: string | null;
  received: { path: string; headers: Record<string, string>; spans: ReturnType<typeof decode>; error: string | null; at: number }[];
}

const collectors = new Map<string, Collector>();
const collector = (name: string) => {
  let c = collectors.get(name);
  if (!c) collectors.set(name, (c = { status: 200, retryAfter: null, received: [] }));
  return c;
};
const waiters = new Set<{ name: string; count: number; answer: () => void }>();

const read = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts)));
  });

export default async function setup(project: TestProject) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url!, "http://collector");
    const body = await read(req);
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(value));
    };
    const [, kind, name, action] = url.pathname.split("/");
    if (kind === "control" && name && action === "wait") {
      const c = collector(name);
      const count = Number(url.searchParams.get("count") ?? 1);
      const reply = () => json(200, c);
      if (c.received.length >= count) return reply();
      const waiter = { name, count, answer: () => (clearTimeout(timer), waiters.delete(waiter), reply()) };
      const timer = setTimeout(waiter.answer, Number(url.searchParams.get("timeoutMs") ?? 30_000));
      waiters.add(waiter);
      return;
    }
    if (kind === "control" && name) {
      const c = collector(name);
      if (req.method === "POST" && body.length) Object.assign(c, JSON.parse(body.toString()));
      return json(200, c);
    }
    if (kind === "otlp" && name && req.method === "POST" && url.pathname.endsWith("/v1/traces")) {
      const c = collector(name);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let spans: ReturnType<typeof decode> = [];
      let error: string | null = null;
      try {
        if (headers["content-type"] !== "application/x-protobuf") throw new Error(`content-type ${headers["content-type"]}`);
        spans = decode(body);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      c.received.push({ path: url.pathname, headers, spans, error, at: Date.now() });
      for (const w of waiters) if (w.name === name && c.received.length >= w.count) w.answer();
      if (error) return json(400, { error });
      // An empty ExportTraceServiceResponse: full success.
      res.writeHead(c.status, { "Content-Type": "application/x-protobuf", ...(c.status >= 300 && c.retryAfter ? { "Retry-After": c.retryAfter } : {}) });
      return res.end(c.status >= 300 ? "unavailable" : "");
    }
    json(404, { error: "no such path" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("collector", `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
