/**
 * An OTLP request's body, read within bounds: refused by its declared length before a byte is read, counted while it
 * streams (a chunked body declares none), and, when gzip-encoded, counted again as it inflates, so that a small body
 * that inflates enormously (a gzip bomb) is stopped at the bound rather than read whole.
 */
import { Problem } from "../http/problem";

/** The most an export may send, as it travels (compressed or not). */
export const MAX_WIRE_BYTES = 4 * 1024 * 1024;
/** The most an export may hold once inflated: an agent's exports are kilobytes. */
export const MAX_DECODED_BYTES = 16 * 1024 * 1024;

export const tooLarge = (what: string, max: number) =>
  new Problem(413, "PAYLOAD_TOO_LARGE", `The export is larger than ${max} bytes ${what}; send it in smaller batches`);

/** How the body is encoded: OTLP/HTTP servers must take gzip; `identity` or none is the body itself. */
export function contentCoding(header: string | null): "gzip" | "identity" | null {
  const coding = (header ?? "").trim().toLowerCase();
  if (coding === "" || coding === "identity") return "identity";
  if (coding === "gzip" || coding === "x-gzip") return "gzip";
  return null;
}

/** Reads a stream whole unless it passes `max` bytes; `onTooLarge` words the refusal. */
export async function readBounded(
  stream: ReadableStream<Uint8Array>,
  max: number,
  onTooLarge: () => Problem,
  onBroken: (e: unknown) => Problem,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await reader.read();
    } catch (e) {
      throw onBroken(e);
    }
    if (step.done) break;
    total += step.value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw onTooLarge();
    }
    chunks.push(step.value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

const unreadable = () => new Problem(400, "BODY_UNREADABLE", "The request body could not be read: the connection broke off or its encoding is malformed");
const notGzip = () => new Problem(400, "MALFORMED_REQUEST", "The body says `Content-Encoding: gzip` but is not valid gzip data");

/** The export's bytes, inflated; a Problem (400, 413) when they cannot be had within bounds. */
export async function readExportBody(request: Request, coding: "gzip" | "identity"): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const wire = await readBounded(request.body, MAX_WIRE_BYTES, () => tooLarge("as sent", MAX_WIRE_BYTES), unreadable);
  if (coding === "identity") return wire;
  const inflating = new Blob([wire]).stream().pipeThrough(new DecompressionStream("gzip"));
  return readBounded(inflating, MAX_DECODED_BYTES, () => tooLarge("once inflated", MAX_DECODED_BYTES), notGzip);
}
