/**
 * An export larger than one multipart part (src/archive/export-sink.ts): its gzip goes up to R2 in parts of PART_BYTES,
 * and the object R2 assembles is whole: its size and sha256 are those the sink reported, and it decompresses to every
 * line written, in order.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decodeNdjson, sha256Hex } from "../src/archive/codec";
import { MultipartGzip, PART_BYTES } from "../src/archive/export-sink";

/** Text gzip cannot shrink much: random bytes, in base64. */
function noise(bytes: number): string {
  const raw = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += 65_536) crypto.getRandomValues(raw.subarray(at, Math.min(bytes, at + 65_536)));
  return btoa(String.fromCharCode(...raw));
}

describe("a multipart export", () => {
  it("spans several parts and reads back whole", async () => {
    const key = `exports/test/${crypto.randomUUID()}.ndjson.gz`;
    const sink = new MultipartGzip(await env.BLOBS.createMultipartUpload(key));
    const lines = 180;
    const written: { n: number; body: string }[] = [];
    for (let n = 0; n < lines; n += 20) {
      const records = Array.from({ length: 20 }, (_, i) => ({ n: n + i, body: noise(48 * 1024) }));
      written.push(...records);
      await sink.write(records);
    }
    const result = await sink.close();

    // About 11 MiB of base64 compresses to about 8.5 MiB: more than one part.
    expect(result.size).toBeGreaterThan(PART_BYTES);
    expect(result.count).toBe(lines);
    const object = await env.BLOBS.get(key);
    const bytes = new Uint8Array(await object!.arrayBuffer());
    expect(bytes.byteLength).toBe(result.size);
    expect(await sha256Hex(bytes)).toBe(result.sha256);
    const read = await decodeNdjson<{ n: number; body: string }>(bytes);
    expect(read.map((r) => r.n)).toEqual(written.map((r) => r.n));
    expect(read.every((r, i) => r.body === written[i]!.body)).toBe(true);
    await env.BLOBS.delete(key);
  });
});
