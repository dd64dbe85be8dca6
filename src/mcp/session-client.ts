/** The Worker's side of an MCP session (session.ts): its object, and what a request may ask of it as its caller. */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { WorkerEnv } from "../runtime/worker-env";

export const sessionStub = (env: WorkerEnv, sessionId: string) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(sessionId));

/**
 * Sessions this isolate saw in use lately, by session and owner, until when (ms). A request naming one is answered
 * without asking its object again for a minute: the session holds only subscriptions and questions, each of which its
 * object checks anew, so a session ended on another isolate is told so there at once and here within that minute.
 */
const inUseHere = new Map<string, number>();
const IN_USE_FOR_MS = 60_000;
const MAX_REMEMBERED = 10_000;

/** Whether the session is still `ownerKey`'s to use (unknown, ended or another caller's: not). */
export async function sessionInUse(env: WorkerEnv, sessionId: string, ownerKey: string) {
  const key = `${sessionId}\n${ownerKey}`;
  if ((inUseHere.get(key) ?? 0) > Date.now()) return true;
  if (!(await sessionStub(env, sessionId).inUse(ownerKey))) return false;
  if (inUseHere.size >= MAX_REMEMBERED) inUseHere.clear();
  inUseHere.set(key, Date.now() + IN_USE_FOR_MS);
  return true;
}

/** Ends the session for its owner; this isolate forgets it was in use. */
export async function endSession(env: WorkerEnv, sessionId: string, ownerKey: string) {
  inUseHere.delete(`${sessionId}\n${ownerKey}`);
  return sessionStub(env, sessionId).end(ownerKey);
}

/** What the MCP server of one request may do with the caller's session. */
export interface SessionPort {
  subscribe(uri: string, projectId: string, taskId: string | null): Promise<void>;
  unsubscribe(uri: string): Promise<void>;
  /** A task the client made: its questions are put to the client, when it answers forms. */
  follow(taskId: string, projectId: string): Promise<void>;
}

const unknownSession = () => new ProtocolError(ProtocolErrorCode.InvalidRequest, "Unknown or ended session: initialize again");

export function sessionPort(env: WorkerEnv, sessionId: string, ownerKey: string): SessionPort {
  const stub = sessionStub(env, sessionId);
  return {
    async subscribe(uri, projectId, taskId) {
      if (!(await stub.subscribe(ownerKey, uri, { projectId, taskId }))) throw unknownSession();
    },
    async unsubscribe(uri) {
      if (!(await stub.unsubscribe(ownerKey, uri))) throw unknownSession();
    },
    async follow(taskId, projectId) {
      if (!(await stub.follow(ownerKey, taskId, projectId))) throw unknownSession();
    },
  };
}
