/** An archive object's bytes: one JSON record a line, gzip (CompressionStream), named by its sha256. */

export interface Encoded {
  bytes: Uint8Array;
  count: number;
  sha256: string;
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  return concatBytes(chunks, size);
}

/** The chunks, `size` bytes in all, as one array. */
export function concatBytes(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A gzip writer of NDJSON lines: the compressed bytes are gathered as they come, so a long export holds only those
 * (R2 needs the length of what it is given, so the object is put whole).
 */
export class NdjsonGzip {
  private readonly gzip = new CompressionStream("gzip");
  private readonly writer = this.gzip.writable.getWriter();
  private readonly encoder = new TextEncoder();
  private readonly done = collect(this.gzip.readable as ReadableStream<Uint8Array>);
  count = 0;

  async write(records: readonly unknown[]) {
    if (records.length === 0) return;
    this.count += records.length;
    await this.writer.write(this.encoder.encode(records.map((r) => JSON.stringify(r) + "\n").join("")));
  }

  /** Decompressed NDJSON text, passed through as it is (an archive object's lines in an export). */
  async writeText(text: string, lines: number) {
    if (lines === 0) return;
    this.count += lines;
    await this.writer.write(this.encoder.encode(text.endsWith("\n") ? text : text + "\n"));
  }

  async close(): Promise<Encoded> {
    await this.writer.close();
    const bytes = await this.done;
    return { bytes, count: this.count, sha256: await sha256Hex(bytes) };
  }
}

export async function encodeNdjson(records: readonly unknown[]): Promise<Encoded> {
  const out = new NdjsonGzip();
  await out.write(records);
  return out.close();
}

/** The object's text, decompressed. */
export async function gunzipText(bytes: ArrayBuffer | Uint8Array): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new TextDecoder().decode(await collect(stream as ReadableStream<Uint8Array>));
}

export const linesOf = (text: string): string[] => text.split("\n").filter((l) => l.length > 0);

export async function decodeNdjson<T>(bytes: ArrayBuffer | Uint8Array): Promise<T[]> {
  return linesOf(await gunzipText(bytes)).map((l) => JSON.parse(l) as T);
}
