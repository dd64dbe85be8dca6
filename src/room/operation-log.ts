/** The room's log line for each operation it settles (`room operation` in docs/ARCHITECTURE.md). */
import { log, logs } from "../runtime/log";
import { type RoomActor, type RoomAnswer, type RoomCommand } from "./commands";
import { HUB_ACTOR } from "../runtime/room-rpc";

/** What the line says of an operation: the writer's Operation, as far as it is logged. */
interface LoggedOperation {
  actor: RoomActor;
  command: RoomCommand;
  requestId?: string;
}

/**
 * One line per operation once its batch is settled: what it was, on which
 * task, for which request and caller, how it ended, and what its batch cost
 * (shared by the operations committed with it).
 */
export function logOperations(projectId: string, operations: readonly LoggedOperation[], answers: RoomAnswer[], started: number, d1Queries: number) {
  if (!logs("info")) return;
  const batch = { duration_ms: Math.round((performance.now() - started) * 10) / 10, d1_queries: d1Queries, batch_size: operations.length };
  operations.forEach(({ command, actor, requestId }, i) => {
    const answer = answers[i]!;
    log("info", "room operation", {
      request_id: requestId,
      project_id: projectId,
      task_id: (answer.ok && answer.taskId) || taskIdOf(command),
      session_id: sessionIdOf(command),
      operation: command.op,
      actor: actorFields(actor),
      outcome: !answer.ok ? "refused" : answer.unchanged ? "unchanged" : "committed",
      code: answer.ok ? undefined : answer.problem.code,
      ...batch,
    });
  });
}

/** The caller, as a kind and an id (never a label: a person's is their email). The hub's own arrives copied over RPC. */
const HUB_USER_ID = (HUB_ACTOR as Extract<RoomActor, { kind: "person" }>).userId;
const actorFields = (actor: RoomActor) =>
  actor.kind === "agent" ? { kind: "server", id: actor.serverId } : actor.userId === HUB_USER_ID ? { kind: "hub" } : { kind: "user", id: actor.userId };

const taskIdOf = (command: RoomCommand) => ("taskId" in command && command.taskId) || undefined;

const sessionIdOf = (command: RoomCommand) => (command.op === "open_session" ? command.session.id : "sessionId" in command ? command.sessionId : undefined);
