/**
 * Stores a code health snapshot, whichever way it came (the CLI's post, the daemon's `architecture_snapshot` frame):
 * the whole snapshot goes to R2 as a DataRef of the project, then the project's room records the DataRef, the summary
 * and the event together. If the room refuses, the bytes are removed: a refused snapshot leaves nothing behind.
 */
import { sha256Hex } from "../auth/secrets";
import { blobKey, completeDatarefRow } from "../datarefs/blobs";
import { summaryOf } from "../domain/code-health";
import type { Snapshot } from "../protocol/code-health";
import type { RoomActor, RoomResult } from "../room/commands";
import { executeInRoom, type RoomReachingEnv } from "../runtime/room-rpc";

const CONTENT_TYPE = "application/json";

export interface SnapshotFrom {
  projectId: string;
  server: { id: string; name: string; keyHash?: string | null };
  sessionId: string | null;
}

export async function storeSnapshot(env: RoomReachingEnv, from: SnapshotFrom, snapshot: Snapshot): Promise<RoomResult> {
  const text = JSON.stringify(snapshot);
  const bytes = new TextEncoder().encode(text);
  const id = crypto.randomUUID();
  const sha256 = await sha256Hex(text);
  await env.BLOBS.put(blobKey(from.projectId, id), bytes, { httpMetadata: { contentType: CONTENT_TYPE }, sha256 });
  const dataref = completeDatarefRow({
    id,
    projectId: from.projectId,
    contentType: CONTENT_TYPE,
    size: bytes.byteLength,
    sha256,
    filename: null,
    createdBy: `agent:${from.server.name}`,
  });
  const summary = summaryOf(snapshot);
  const actor: RoomActor = {
    kind: "agent",
    serverId: from.server.id,
    serverName: from.server.name,
    label: `agent:${from.server.name}`,
    ...(from.server.keyHash ? { keyHash: from.server.keyHash } : {}),
  };
  const result = await executeInRoom(env, from.projectId, actor, {
    op: "code_health_snapshot",
    dataref,
    snapshot: {
      id: crypto.randomUUID(),
      projectId: from.projectId,
      serverId: from.server.id,
      sessionId: from.sessionId,
      datarefId: id,
      healthScore: summary.healthScore,
      healthGrade: summary.healthGrade,
      techDebtHours: summary.techDebtHours,
      summary: JSON.stringify(summary.details),
      scannedAt: summary.scannedAt,
      receivedAt: dataref.createdAt,
    },
  }).catch(async (e: unknown) => {
    await env.BLOBS.delete(blobKey(from.projectId, id));
    throw e;
  });
  if (!result.ok) await env.BLOBS.delete(blobKey(from.projectId, id));
  return result;
}
