/** The Worker's side of an MCP session (session.ts): its object, and what a request may ask of it as its caller. */
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { WorkerEnv } from "../runtime/worker-env";

export const sessionStub = (env: WorkerEnv, sessionId: string) => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(sessionId));

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
