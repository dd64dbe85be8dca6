/**
 * hub.py's `architecture_snapshot` frame (`_run_architecture_scan`: after "Scan now", and when a session closes):
 * `{type, session_id, project_id, snapshot}`. It is taken by the Worker that relays the daemon's socket, whatever its
 * size (a snapshot is often more than the 1 MiB a frame may carry to the server's link), and stored as a post is.
 * A refusal is told to the daemon as `{"type": "error", code, detail}`, and nothing is kept.
 */
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import { MAX_SNAPSHOT_BYTES, snapshotSchema } from "../protocol/code-health";
import { zodFieldErrors } from "../protocol/field-errors";
import type { RoomReachingEnv } from "../runtime/room-rpc";
import { storeSnapshot } from "./store";

/** Whether a daemon's frame is a snapshot, read from its first characters (hub.py writes `type` first). */
export const isSnapshotFrame = (data: string | ArrayBuffer) => typeof data === "string" && /^\{\s*"type"\s*:\s*"architecture_snapshot"/.test(data.slice(0, 64));

export interface FrameRefusal {
  code: "INVALID_MESSAGE" | "FRAME_TOO_LARGE" | "UNKNOWN_SESSION" | "NOT_SERVED";
  detail: string;
}

const refusal = (code: FrameRefusal["code"], detail: string): FrameRefusal => ({ code, detail });

/** Stores the snapshot a server's daemon sent; null when stored, otherwise why not. */
export async function snapshotFromDaemon(env: RoomReachingEnv, serverId: string, text: string): Promise<FrameRefusal | null> {
  if (text.length > MAX_SNAPSHOT_BYTES) return refusal("FRAME_TOO_LARGE", `architecture_snapshot: a snapshot is at most ${MAX_SNAPSHOT_BYTES} bytes`);
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return refusal("INVALID_MESSAGE", "architecture_snapshot: a frame is a JSON object");
  }
  const deep = tooDeepUnder(frame);
  if (deep !== null) return refusal("INVALID_MESSAGE", `architecture_snapshot.${deep}: ${TOO_DEEP}`);
  const sessionId = typeof frame.session_id === "string" && frame.session_id !== "" ? frame.session_id : null;
  const named = typeof frame.project_id === "string" && frame.project_id !== "" ? frame.project_id : null;
  const server = await env.DB.prepare("SELECT name, project_ids, api_key_hash FROM servers WHERE id = ?1 AND revoked_at IS NULL")
    .bind(serverId)
    .first<{ name: string; project_ids: string | null; api_key_hash: string | null }>();
  if (!server) return refusal("NOT_SERVED", "architecture_snapshot: the server is revoked");
  let projectId = named;
  if (sessionId) {
    const session = await env.DB.prepare("SELECT project_id FROM sessions WHERE id = ?1 AND server_id = ?2")
      .bind(sessionId, serverId)
      .first<{ project_id: string }>();
    if (!session) return refusal("UNKNOWN_SESSION", `architecture_snapshot: no session ${sessionId} on this server`);
    // The daemon sends an empty project_id for a session it started without one (a scan when the session closed): it is the session's.
    if (named && named !== session.project_id) return refusal("NOT_SERVED", `architecture_snapshot: session ${sessionId} is not in project ${named}`);
    projectId = session.project_id;
  }
  if (!projectId) return refusal("INVALID_MESSAGE", "architecture_snapshot needs session_id or project_id");
  const scope = server.project_ids === null ? null : (JSON.parse(server.project_ids) as string[] | null);
  const project = await env.DB.prepare("SELECT id FROM projects WHERE id = ?1").bind(projectId).first<{ id: string }>();
  if (!project || (scope !== null && !scope.includes(projectId)))
    return refusal("NOT_SERVED", `architecture_snapshot: project ${projectId} is not one this server serves`);
  const parsed = snapshotSchema.safeParse(frame.snapshot);
  if (!parsed.success) {
    const first = zodFieldErrors(parsed.error, "snapshot")[0]!;
    return refusal("INVALID_MESSAGE", `architecture_snapshot.${first.path}: ${first.message}`);
  }
  const result = await storeSnapshot(env, { projectId, server: { id: serverId, name: server.name, keyHash: server.api_key_hash }, sessionId }, parsed.data);
  return result.ok ? null : refusal("NOT_SERVED", `architecture_snapshot: ${result.problem.detail}`);
}
