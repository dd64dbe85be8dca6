/** The OTLP receiver's pure reading of an export as usage (src/telemetry/usage-items.ts), on the cases exporters rarely send. */
import { describe, expect, it } from "vitest";
import type { DecodedExport, SumPoint } from "../src/telemetry/otlp-model";
import { isoOfNanos, timeOf, usageItemsOf } from "../src/telemetry/usage-items";

const AT = "2026-12-02T10:00:00.000Z";
const point = (value: number, attributes: SumPoint["attributes"] = {}, startNs = 1n, timeNs = 0n): SumPoint => ({ attributes, startNs, timeNs, value });
const metrics = (name: string, temporality: "delta" | "cumulative" | "unspecified", points: SumPoint[]): DecodedExport => ({
  signal: "metrics",
  resources: [{ attributes: { "service.name": "claude-code", "orchestratia.session_id": "hub-1" }, metrics: [{ name, sum: { temporality, points } }] }],
});
const logs = (
  resource: Record<string, string>,
  record: Partial<{ eventName: string; body: string; attributes: Record<string, string | number> }>,
): DecodedExport => ({
  signal: "logs",
  resources: [{ attributes: resource, records: [{ eventName: "", body: null, attributes: {}, timeNs: 0n, observedNs: 0n, ...record }] }],
});

describe("usage items", () => {
  it("takes unset or implausible times as the time the export arrived", () => {
    const ns = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;
    expect(timeOf(0n, AT)).toBe(AT);
    expect(timeOf(2n ** 64n - 1n, AT)).toBe(AT);
    expect(timeOf(ns("2026-10-01T00:00:00.000Z"), AT)).toBe(AT);
    expect(timeOf(ns("2026-12-02T09:59:58.250Z"), AT)).toBe("2026-12-02T09:59:58.250Z");
    // A start time is only compared with the same series' others: any is kept as it is.
    expect(isoOfNanos(2n ** 64n - 1n, AT)).toBe("2554-07-21T23:34:33.709Z");
  });

  it("counts no point of a temporality the spec forbids, nor one without a value or below zero, and says why", () => {
    expect(usageItemsOf(metrics("claude_code.cost.usage", "unspecified", [point(1)]), AT)).toMatchObject({ items: [], invalid: 1 });
    const out = usageItemsOf(metrics("claude_code.cost.usage", "delta", [point(NaN), point(-2), point(0), point(0.5)]), AT);
    expect(out).toMatchObject({ invalid: 2, invalidReason: expect.stringContaining("negative") });
    expect(out.items.map((i) => i.amounts)).toEqual([{ cost_usd: 0.5 }]);
  });

  it("names a cumulative series by its metric, point attributes and resource, and keeps a zero to start it", () => {
    const out = usageItemsOf(metrics("claude_code.token.usage", "cumulative", [point(0, { type: "input", model: "m" }, 5_000_000n)]), AT);
    expect(out.items).toEqual([
      expect.objectContaining({
        hubSessionId: "hub-1",
        model: "m",
        amounts: { input_tokens: 0 },
        cumulative: { series: expect.stringContaining('"metric":"claude_code.token.usage"'), startedAt: "1970-01-01T00:00:00.005Z" },
      }),
    ]);
    expect(usageItemsOf(metrics("claude_code.token.usage", "delta", [point(3, { type: "reasoning" })]), AT).items).toEqual([]);
  });

  it("ignores names that are only properties of every object", () => {
    expect(usageItemsOf(metrics("constructor", "delta", [point(1)]), AT)).toEqual({ items: [], invalid: 0, invalidReason: null });
    expect(usageItemsOf(logs({}, { body: "toString", attributes: { duration_ms: 3 } }), AT).items).toEqual([]);
  });

  it("reads an event by its event_name field, and never counts cached input twice", () => {
    const codex = usageItemsOf(
      logs(
        { "service.name": "codex_exec" },
        {
          eventName: "codex.sse_event",
          attributes: { "event.kind": "response.completed", input_token_count: "10", cached_token_count: 40, output_token_count: 2 },
        },
      ),
      AT,
    );
    expect(codex.items).toEqual([expect.objectContaining({ agentType: "codex_cli", amounts: { input_tokens: 0, cache_read_tokens: 40, output_tokens: 2 } })]);
    // Claude Code's short `event.name` is read as its own only from Claude Code.
    expect(usageItemsOf(logs({ "service.name": "other" }, { attributes: { "event.name": "api_request", duration_ms: 5 } }), AT).items).toEqual([]);
    expect(usageItemsOf(logs({ "service.name": "claude-code" }, { attributes: { "event.name": "api_request", duration_ms: 5 } }), AT).items).toEqual([
      expect.objectContaining({ agentType: "claude_code", amounts: { api_ms: 5 } }),
    ]);
  });
});
