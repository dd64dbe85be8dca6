/** Where DataRef bytes live in R2: one prefix per project, so a project's objects go with it. */
import type { DatarefRow } from "../views/datarefs";

export const blobKey = (projectId: string, datarefId: string) => `projects/${projectId}/datarefs/${datarefId}`;

/** The row of a DataRef whose bytes the hub stored itself, whole, just now (no upload URL was ever handed out). */
export function completeDatarefRow(stored: Pick<DatarefRow, "id" | "projectId" | "contentType" | "size" | "sha256" | "filename" | "createdBy">): DatarefRow {
  const now = new Date().toISOString();
  return { ...stored, status: "complete", createdAt: now, uploadExpiresAt: now, completedAt: now };
}

/** Removes every object a project stored in R2, its DataRefs', archives' and exports' (its rows go with the project through the foreign key). */
export async function deleteProjectBlobs(bucket: R2Bucket, projectId: string) {
  for (const prefix of [`projects/${projectId}/`, `archives/${projectId}/`, `exports/${projectId}/`]) {
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix, cursor });
      if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
}
