/** The room's alarm forgets DataRefs whose upload never completed, with any bytes a broken upload left. */
import { blobKey } from "../datarefs/blobs";
import type { RoomEnv } from "../runtime/room-env";
import { forgetAbandonedUploads, nextUploadExpiry } from "./room-queries";

/** How long past its URL's expiry an upload that started in time may still be streaming. */
const UPLOAD_GRACE_MS = 60 * 60 * 1000;

/** Forgets the project's abandoned uploads; returns when the next one is due. */
export async function cleanUpUploads(env: RoomEnv, projectId: string): Promise<number | null> {
  const now = Date.now();
  const gone = await forgetAbandonedUploads(env.DB, projectId, now, UPLOAD_GRACE_MS);
  if (gone.length) await env.BLOBS.delete(gone.map((id) => blobKey(projectId, id)));
  const next = await nextUploadExpiry(env.DB, projectId);
  return next === null ? null : Math.max(next, now) + 1000;
}
