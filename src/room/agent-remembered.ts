/**
 * Remembered agent requests (those with an effect): the first answer to an id
 * is kept in D1's idempotency_keys, so that the same request again, on any
 * socket of the server, gets it and does nothing twice.
 */
import { and, eq, sql } from "drizzle-orm";
import { sha256Hex } from "../auth/secrets";
import type { Db } from "../db/client";
import { interventions } from "../db/schema";
import { REMEMBER_ANSWERS_MS } from "../protocol/agent-orchestrator-messages";
import { failure, idReused, success, type Answer, type Message } from "./agent-answers";
import type { AgentAttachment } from "./sockets";

export async function rememberedAnswer(
  room: { db: Db; projectId: string },
  a: AgentAttachment,
  m: Message,
  fingerprint: string,
  answerIt: () => Promise<Answer>,
): Promise<Answer> {
  const db = room.db;
  const caller = `server:${a.serverId}`;
  // Per project: the same id sent to two projects' sockets names two requests.
  const key = `agent-ws:${room.projectId}:${m.id}`;
  const hash = await sha256Hex(fingerprint);
  const now = Date.now();
  const claimedAt = new Date(now).toISOString();
  // This room is the only one answering this key, so a claim with no answer is one cut off (the room restarted): taken over.
  const claim = await db.run(sql`INSERT INTO idempotency_keys (caller, key, request_hash, created_at) VALUES (${caller}, ${key}, ${hash}, ${claimedAt})
      ON CONFLICT (caller, key) DO UPDATE SET request_hash = excluded.request_hash, response_status = NULL, response_body = NULL, created_at = excluded.created_at
      WHERE idempotency_keys.created_at < ${new Date(now - REMEMBER_ANSWERS_MS).toISOString()} OR idempotency_keys.response_status IS NULL`);
  if (claim.meta.changes === 0) {
    const prior = await db.get<{ request_hash: string; response_body: string | null }>(
      sql`SELECT request_hash, response_body FROM idempotency_keys WHERE caller = ${caller} AND key = ${key}`,
    );
    if (prior && prior.request_hash !== hash) return idReused(m.id!);
    if (prior?.response_body) return replay(room, a, m, JSON.parse(prior.response_body) as Answer);
  }
  let answer: Answer;
  try {
    answer = await answerIt();
  } catch (e) {
    // Nothing was done that must not be done twice: a retry of this id runs again.
    await db.run(sql`DELETE FROM idempotency_keys WHERE caller = ${caller} AND key = ${key} AND created_at = ${claimedAt}`);
    throw e;
  }
  await db.run(
    sql`UPDATE idempotency_keys SET response_status = 200, response_body = ${JSON.stringify(answer)}, response_content_type = 'application/json'
          WHERE caller = ${caller} AND key = ${key} AND created_at = ${claimedAt}`,
  );
  return answer;
}

/** The first answer again; for ask-user, the answer its question has by now (none yet while nobody answered). */
async function replay(room: { db: Db; projectId: string }, a: AgentAttachment, m: Message, first: Answer): Promise<Answer> {
  if (first.type !== "later") return first;
  const asked = await room.db.query.interventions.findFirst({
    where: and(eq(interventions.projectId, room.projectId), eq(interventions.serverId, a.serverId!), eq(interventions.correlationId, m.id!)),
    columns: { status: true, response: true, respondedAt: true },
  });
  if (asked?.status === "responded") return success({ answer: asked.response, metadata: { answeredAt: asked.respondedAt } });
  if (asked?.status === "timed_out") return failure("TIMEOUT", "Nobody answered in time");
  if (asked?.status === "cancelled") return failure("NOT_FOUND", "The question was withdrawn");
  return first;
}
