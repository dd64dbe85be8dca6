/**
 * What the OTLP receiver refuses, and how: credentials checked before the body is read, sizes refused before reading
 * (and while inflating), gzip, malformed JSON and protobuf, other content types, sessions the credential may not
 * report for, unknown metrics, personal access tokens, and traces.
 */
import { ProtobufMetricsSerializer } from "@opentelemetry/otlp-transformer";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { conformingFetch } from "./api-conformance";
import { addMember, BASE, call, createUser, until } from "./helpers";
import { claudeResource, exportingToHub, hubMeter, jsonOf, sessionUsage, type Encoding } from "./otlp-exporters";
import { createWorld, openSession, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("OTLP refusals");
});

const post = (signal: string, body: BodyInit | null, headers: Record<string, string>) =>
  conformingFetch(new Request(`${BASE}/v1/${signal}`, { method: "POST", body, headers }));

const JSON_TYPE = { "Content-Type": "application/json" };
const PROTOBUF_TYPE = { "Content-Type": "application/x-protobuf" };
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A Claude Code cost point for the session, as OTLP/JSON. */
const costExport = (sessionId: string, value = 0.5) =>
  JSON.stringify({
    resourceMetrics: [
      {
        resource: {
          attributes: [
            { key: "service.name", value: { stringValue: "claude-code" } },
            { key: "orchestratia.session_id", value: { stringValue: sessionId } },
          ],
        },
        scopeMetrics: [
          {
            metrics: [
              {
                name: "claude_code.cost.usage",
                unit: "USD",
                sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: String(Date.now() * 1e6), asDouble: value }] },
              },
            ],
          },
        ],
      },
    ],
  });

const gzip = async (bytes: Uint8Array) =>
  new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());

/** The message of a google.rpc.Status (field 2), as a protobuf client receives a refusal. */
function statusMessage(body: Uint8Array): string {
  const reader = new BinaryReader(body);
  let message = "";
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 2) message = reader.string();
    else reader.skip(wireType);
  }
  return message;
}

/** A body of 1 MiB chunks that never ends, and how many chunks were taken from it. */
function endless() {
  const chunk = new Uint8Array(1024 * 1024).fill(0x20);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({ pull: (controller) => void (pulled++, controller.enqueue(chunk)) }, { highWaterMark: 0 });
  return { body, pulls: () => pulled };
}

const newSession = () => openSession(w.worker.apiKey, w.project.id, `s-${crypto.randomUUID().slice(0, 8)}`);
const usageRows = async (sessionId: string) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM session_usage WHERE session_id = ?").bind(sessionId).first<{ n: number }>())!.n;

describe("credentials", () => {
  it("refuses a missing, unknown or malformed credential with 401 before reading the body", async () => {
    const { body, pulls } = endless();
    const res = await post("metrics", body, { ...JSON_TYPE, ...bearer("orc_not-a-key") });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "INVALID_API_KEY" });
    // Read, the body would have been refused as too large after 4 MiB (or read on for ever).
    expect(pulls()).toBeLessThan(3);
    expect((await post("metrics", costExport(w.workerSession), JSON_TYPE)).status).toBe(401);
    expect((await post("metrics", costExport(w.workerSession), { ...JSON_TYPE, "X-API-Key": "orcpat_short" })).status).toBe(401);
  });

  it("answers a protobuf client's refusal as a google.rpc.Status in protobuf", async () => {
    const res = await post("metrics", new Uint8Array([0x0a, 0x00]), { ...PROTOBUF_TYPE, ...bearer("orc_not-a-key") });
    expect(res.status).toBe(401);
    expect(res.headers.get("Content-Type")).toBe("application/x-protobuf");
    expect(statusMessage(new Uint8Array(await res.arrayBuffer()))).toContain("API key");
  });

  it("rejects points for another server's session, keeping nothing of them", async () => {
    const sessionId = await newSession();
    for (const encoding of ["json", "protobuf"] as Encoding[]) {
      const m = hubMeter({ encoding, credential: w.orchestrator.apiKey, resource: claudeResource(sessionId), temporality: "delta" });
      const [answer] = await exportingToHub(async () => {
        m.cost.add(0.5, { model: "claude-sonnet-4-6" });
        m.tokens.add(10, { model: "claude-sonnet-4-6", type: "input" });
        await m.flush();
      });
      expect(answer!.status).toBe(200);
      const partial = encoding === "json" ? jsonOf(answer!).partialSuccess : ProtobufMetricsSerializer.deserializeResponse(answer!.body).partialSuccess;
      expect(partial).toMatchObject({ errorMessage: expect.stringContaining("may not report") });
      expect(Number(partial!.rejectedDataPoints)).toBe(2);
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(await usageRows(sessionId)).toBe(0);
  });

  it("takes a person's write token for a session of their project, refuses a read token, and rejects a project they are not in", async () => {
    const member = await createUser(w.admin, "member");
    const outsider = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, member.id);
    const token = async (who: { token: string }, scope: string) =>
      (await call("/api/v1/auth/me/tokens", { token: who.token, body: { name: "otel", scope } })).json.token as string;
    const sessionId = await newSession();
    expect((await post("metrics", costExport(sessionId, 0.25), { ...JSON_TYPE, ...bearer(await token(member, "write")) })).status).toBe(200);
    const read = await post("metrics", costExport(sessionId), { ...JSON_TYPE, "X-API-Key": await token(member, "read") });
    expect(read.status).toBe(403);
    expect(await read.json()).toMatchObject({ code: "TOKEN_SCOPE" });
    const foreign = await post("metrics", costExport(sessionId), { ...JSON_TYPE, ...bearer(await token(outsider, "write")) });
    expect(await foreign.json()).toMatchObject({ partialSuccess: { rejectedDataPoints: "1" } });
    const row = await until(
      () => sessionUsage(sessionId),
      (r) => r !== null,
      "usage",
    );
    expect(row!.cost_usd).toBeCloseTo(0.25, 9);
  });
});

describe("bodies", () => {
  it("refuses a body whose declared size is over the bound with 413 before anything else", async () => {
    const { body, pulls } = endless();
    const res = await post("metrics", body, { ...JSON_TYPE, "Content-Length": String(5 * 1024 * 1024) });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    expect(pulls()).toBeLessThan(3);
  });

  it("stops reading a body that streams past the bound, and a gzip body that inflates past it", async () => {
    const { body, pulls } = endless();
    const res = await post("metrics", body, { ...JSON_TYPE, ...bearer(w.worker.apiKey) });
    expect(res.status).toBe(413);
    expect(pulls()).toBeLessThan(10);
    // 40 MiB of spaces gzip to a few kilobytes.
    const bomb = await gzip(new Uint8Array(40 * 1024 * 1024).fill(0x20));
    expect(bomb.length).toBeLessThan(100_000);
    const inflated = await post("metrics", bomb, { ...JSON_TYPE, "Content-Encoding": "gzip", ...bearer(w.worker.apiKey) });
    expect(inflated.status).toBe(413);
    expect(((await inflated.json()) as { detail: string }).detail).toContain("inflated");
  });

  it("reads gzip bodies, and refuses gzip that is not", async () => {
    const sessionId = await newSession();
    const res = await post("metrics", await gzip(new TextEncoder().encode(costExport(sessionId, 0.125))), {
      ...JSON_TYPE,
      "Content-Encoding": "gzip",
      ...bearer(w.worker.apiKey),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    const row = await until(
      () => sessionUsage(sessionId),
      (r) => r !== null,
      "gzip usage",
    );
    expect(row!.cost_usd).toBeCloseTo(0.125, 9);
    const broken = await post("metrics", new Uint8Array([1, 2, 3, 4]), { ...JSON_TYPE, "Content-Encoding": "gzip", ...bearer(w.worker.apiKey) });
    expect(broken.status).toBe(400);
  });

  it("answers 400 for malformed JSON and protobuf, and 415 for other types and encodings", async () => {
    const auth = bearer(w.worker.apiKey);
    const notJson = await post("metrics", "{ not json", { ...JSON_TYPE, ...auth });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ code: "MALFORMED_EXPORT" });
    const wrongShape = await post("logs", JSON.stringify({ resourceLogs: "many" }), { ...JSON_TYPE, ...auth });
    expect(wrongShape.status).toBe(400);
    // Field 1 (resource_metrics) says 100 bytes follow; two do.
    const truncated = await post("metrics", new Uint8Array([0x0a, 0x64, 0x0a, 0x00]), { ...PROTOBUF_TYPE, ...auth });
    expect(truncated.status).toBe(400);
    expect(truncated.headers.get("Content-Type")).toBe("application/x-protobuf");
    expect(statusMessage(new Uint8Array(await truncated.arrayBuffer()))).toContain("not a valid OTLP metrics export");
    const text = await post("metrics", costExport(w.workerSession), { "Content-Type": "text/plain", ...auth });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    expect((await post("metrics", costExport(w.workerSession), { ...JSON_TYPE, "Content-Encoding": "br", ...auth })).status).toBe(415);
  });
});

describe("what is not usage", () => {
  it("takes unknown metrics and other kinds of metric and ignores them", async () => {
    const sessionId = await newSession();
    const m = hubMeter({ encoding: "protobuf", credential: w.worker.apiKey, resource: claudeResource(sessionId), temporality: "cumulative" });
    const [answer] = await exportingToHub(async () => {
      m.meter.createCounter("claude_code.session.count").add(1);
      m.meter.createCounter("claude_code.lines_of_code.count").add(12, { type: "added" });
      m.meter.createHistogram("claude_code.cost.usage.histogram").record(3);
      m.meter.createGauge("claude_code.token.usage").record(5, { type: "input" });
      await m.flush();
    });
    expect(answer!.status).toBe(200);
    expect(ProtobufMetricsSerializer.deserializeResponse(answer!.body).partialSuccess).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await usageRows(sessionId)).toBe(0);
  });

  it("rejects a usage point with a negative value, counting the rest", async () => {
    const sessionId = await newSession();
    const body = JSON.parse(costExport(sessionId, 0.5));
    body.resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints.push({ asDouble: -1 });
    const res = await post("metrics", JSON.stringify(body), { ...JSON_TYPE, ...bearer(w.worker.apiKey) });
    expect(await res.json()).toEqual({ partialSuccess: { rejectedDataPoints: "1", errorMessage: expect.stringContaining("negative") } });
  });

  it("answers spans without keeping them", async () => {
    const spans = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }] },
          scopeSpans: [{ spans: [{ traceId: "5b8efff798038103d269b633813fc60c", spanId: "eee19b7ec3c1b174", name: "claude_code.interaction", kind: 1 }] }],
        },
      ],
    };
    const res = await post("traces", JSON.stringify(spans), { ...JSON_TYPE, ...bearer(w.worker.apiKey) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
  });
});
