/**
 * Files sent between people and a session's machine are kept as DataRefs of the project: streamed to R2 and hashed on
 * the way (datarefs/hashing-put.ts), under the project's prefix, served by signed URL like any DataRef. The row is inserted
 * by the project's room, with the transfer it belongs to.
 */
import { blobKey, completeDatarefRow } from "../datarefs/blobs";
import { putComputingSha256 } from "../datarefs/hashing-put";
import type { Env } from "../runtime/env";
import type { DatarefRow } from "../views/datarefs";

const CONTENT_TYPE = "application/octet-stream";

/** Stores exactly `size` bytes of `body` as a complete DataRef (not yet recorded); rejects, storing nothing, otherwise. */
export async function storeFile(env: Env, projectId: string, body: ReadableStream<Uint8Array>, size: number, file: { filename: string; createdBy: string }) {
  const id = crypto.randomUUID();
  const sha256 = await putComputingSha256(env.BLOBS, blobKey(projectId, id), body, size, { httpMetadata: { contentType: CONTENT_TYPE } });
  return completeDatarefRow({ id, projectId, contentType: CONTENT_TYPE, size, sha256, filename: file.filename, createdBy: file.createdBy });
}

/** The bytes of a stored file the room did not record (its transfer was refused). */
export const discardFile = (env: Env, row: Pick<DatarefRow, "projectId" | "id">) => env.BLOBS.delete(blobKey(row.projectId, row.id));
