/**
 * One line per message an agent socket handles, as the Worker writes one per
 * HTTP request (the seed: "All requests logged with agent ID"): the agent's
 * server, the message's type and id, the task it names, how it ended and how
 * long it took. Never the payload: it is the agent's text.
 */
import { log, logs } from "../runtime/log";
import { isPlainObject } from "../domain/plain-object";
import type { Answer } from "./agent-answers";
import type { AgentAttachment } from "./sockets";

/** A message's `id` when it is a string, whatever else is wrong with it: refusals answer to it. */
export const idOf = (parsed: unknown): string | null => (isPlainObject(parsed) && typeof parsed.id === "string" ? parsed.id : null);

/** A message's `type` when it is a string. */
export const typeOf = (parsed: unknown): string | undefined => (isPlainObject(parsed) && typeof parsed.type === "string" ? parsed.type : undefined);

/** The task a message is about, when its payload names one as an id (nothing the agent wrote is logged). */
export const taskIdIn = (payload: unknown) => {
  const taskId = (payload as { taskId?: unknown } | null)?.taskId;
  return typeof taskId === "string" && /^[0-9a-f-]{36}$/i.test(taskId) ? taskId : undefined;
};

/** How an answer ended: `ok`, the error's code, or `pending` when the answer comes later (ask-user). */
export const outcomeOf = (answer: Answer): string =>
  answer.type === "response:success" ? "ok" : answer.type === "response:error" ? answer.error.code : "pending";

export function logMessage(
  projectId: string,
  a: AgentAttachment,
  m: { type: string; id: string | null; taskId?: string; outcome: string; started: number },
) {
  const level = m.outcome === "INTERNAL_ERROR" ? "error" : "info";
  if (!logs(level)) return;
  log(level, "agent message", {
    project_id: projectId,
    task_id: m.taskId,
    operation: m.type.slice(0, 100),
    message_id: m.id?.slice(0, 200) ?? null,
    actor: { kind: "server", id: a.serverId, name: a.serverName },
    outcome: m.outcome,
    duration_ms: Math.round((performance.now() - m.started) * 10) / 10,
  });
}
