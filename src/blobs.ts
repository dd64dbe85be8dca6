/** Where DataRef bytes live in R2: one prefix per project, so a project's objects go with it. */

export const blobKey = (projectId: string, datarefId: string) => `projects/${projectId}/datarefs/${datarefId}`;

/** Removes every object a project stored in R2 (its rows go with the project through the foreign key). */
export async function deleteProjectBlobs(bucket: R2Bucket, projectId: string) {
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: `projects/${projectId}/`, cursor });
    if (page.objects.length) await bucket.delete(page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
