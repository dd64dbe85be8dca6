/** The cursor of a list paged newest first by (created_at, id): opaque to clients, the last row's key inside. */

export const encodeCursor = (createdAt: string, id: string) => btoa(`${createdAt}|${id}`).replace(/=+$/, "");

/** The key a cursor holds; null for anything the hub did not hand out. */
export function decodeCursor(cursor: string): [string, string] | null {
  try {
    const [createdAt, id, ...rest] = atob(cursor).split("|");
    if (createdAt && id && rest.length === 0 && !Number.isNaN(Date.parse(createdAt))) return [createdAt, id];
  } catch {
    // not base64
  }
  return null;
}
