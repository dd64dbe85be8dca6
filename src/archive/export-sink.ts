/**
 * A gzip NDJSON object written to R2 as it is made: the compressed bytes go up in multipart parts of PART_BYTES (R2's
 * least but the last), hashed as they pass, so an export of any size holds about one part in memory.
 */
import { concatBytes } from "./codec";

/** R2's smallest part but the last. */
export const PART_BYTES = 5 * 1024 * 1024;

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

export interface Written {
  size: number;
  sha256: string;
  count: number;
}

export class MultipartGzip {
  private readonly gzip = new CompressionStream("gzip");
  private readonly writer = this.gzip.writable.getWriter();
  private readonly encoder = new TextEncoder();
  private readonly uploaded: Promise<{ size: number; sha256: string; parts: R2UploadedPart[] }>;
  count = 0;

  constructor(private readonly upload: R2MultipartUpload) {
    this.uploaded = this.pump();
    // A failed upload errors the writes too (the readable is cancelled), rather than leaving them waiting.
    this.uploaded.catch(() => undefined);
  }

  private async pump() {
    const digest = new crypto.DigestStream("SHA-256");
    const hashing = digest.getWriter();
    const parts: R2UploadedPart[] = [];
    let held: Uint8Array[] = [];
    let heldSize = 0;
    let size = 0;
    const flush = async () => {
      parts.push(await this.upload.uploadPart(parts.length + 1, concatBytes(held, heldSize)));
      held = [];
      heldSize = 0;
    };
    for await (const chunk of this.gzip.readable as ReadableStream<Uint8Array>) {
      await hashing.write(chunk);
      held.push(chunk);
      heldSize += chunk.byteLength;
      size += chunk.byteLength;
      if (heldSize >= PART_BYTES) await flush();
    }
    if (heldSize > 0 || parts.length === 0) await flush();
    await hashing.close();
    return { size, sha256: hex(await digest.digest), parts };
  }

  async write(records: readonly unknown[]) {
    if (records.length === 0) return;
    this.count += records.length;
    await this.writer.write(this.encoder.encode(records.map((r) => JSON.stringify(r) + "\n").join("")));
  }

  /** NDJSON bytes passed through as they are (an archive object's, decompressed as it is read). */
  async writeStream(ndjson: ReadableStream<Uint8Array>) {
    let last = 10;
    for await (const chunk of ndjson) {
      if (chunk.byteLength === 0) continue;
      for (const byte of chunk) if (byte === 10) this.count++;
      last = chunk[chunk.byteLength - 1]!;
      await this.writer.write(chunk);
    }
    if (last !== 10) {
      this.count++;
      await this.writer.write(this.encoder.encode("\n"));
    }
  }

  /** Finishes the object; its size and sha256. */
  async close(): Promise<Written> {
    await this.writer.close();
    const { size, sha256, parts } = await this.uploaded;
    await this.upload.complete(parts);
    return { size, sha256, count: this.count };
  }

  async abort() {
    await this.writer.abort().catch(() => undefined);
    await this.upload.abort().catch(() => undefined);
  }
}
