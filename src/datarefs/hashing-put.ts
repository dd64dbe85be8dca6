/**
 * An R2 put that computes the bytes' sha256 on the way, for uploads that did
 * not declare one (R2 only checks a sha256 it is given; it computes none).
 */
import { createHash } from "node:crypto";

/**
 * Bytes read from the body at a time. Request bodies hand out small chunks
 * (4 KiB in workerd): hashing and forwarding each costs more than the hash
 * itself, while one read into a large buffer takes whatever has arrived.
 */
const READ_BYTES = 1 << 20;

/**
 * Puts exactly `size` bytes of `body` at `key` and answers their sha256 (hex).
 * Each chunk is hashed, then written to the put, which holds the reader back:
 * at most one chunk is in memory, whatever the object's size (a tee would
 * buffer everything the hash had read ahead of R2). Rejects, and stores
 * nothing, when the body is not `size` bytes or breaks off.
 */
export async function putComputingSha256(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, size: number, options: R2PutOptions) {
  const sized = new FixedLengthStream(size);
  const writer = sized.writable.getWriter();
  const hash = createHash("sha256");
  const pump = async () => {
    const reader = body.getReader({ mode: "byob" });
    try {
      for (;;) {
        // A fresh buffer each time: the put may still hold the previous chunk.
        const { done, value } = await reader.read(new Uint8Array(READ_BYTES));
        if (done) break;
        hash.update(value);
        await writer.write(value);
      }
      await writer.close();
    } catch (e) {
      // The put must fail too, not wait for bytes that will not come.
      await writer.abort(e).catch(() => undefined);
      await reader.cancel(e).catch(() => undefined);
      throw e;
    }
  };
  await Promise.all([bucket.put(key, sized.readable, options), pump()]);
  return hash.digest("hex");
}
