/**
 * What agents hear once a batch has committed: their assignments and
 * cancellations, events of the tasks they subscribed to, answers to the
 * questions they wait on, and word that no answer will come. Frames about a
 * task carry its W3C `traceparent`, so its work can be followed across agents.
 */
import { notify, respond, respondError } from "./agent-answers";
import type { AgentNotice } from "./operations";
import { attachmentOf, type AgentAttachment } from "./sockets";
import type { CommittedEvent } from "./statements";

const serverOf = (ws: WebSocket) => (attachmentOf(ws) as AgentAttachment).serverId;

export function tellAgents(sockets: WebSocket[], events: CommittedEvent[], notices: AgentNotice[]) {
  if (sockets.length === 0) return;
  for (const ws of sockets) {
    const a = attachmentOf(ws) as AgentAttachment;
    for (const e of events) {
      if (e.type === "task_assigned" && e.data.server_id === a.serverId) {
        const message =
          e.data.pending_approval === true
            ? "Task assigned; it waits for a person's approval before it may start. Use request:get-task to view details."
            : "Task assigned. Use request:get-task to view details.";
        notify(ws, "notify:task-assigned", { taskId: e.task_id, message }, e.traceparent);
      }
      if (e.type === "task_cancelled" && e.data.assigned_server_id === a.serverId) {
        notify(ws, "notify:task-cancelled", { taskId: e.task_id, reason: e.data.reason ?? "Cancelled" }, e.traceparent);
      }
      if (e.task_id && a.subscriptions.includes(e.task_id)) notify(ws, "notify:task-event", { taskId: e.task_id, event: e }, e.traceparent);
    }
  }
  for (const n of notices) {
    for (const ws of sockets.filter((s) => serverOf(s) === n.serverId)) {
      if (n.kind === "answer") respond(ws, n.correlationId, { answer: n.answer, metadata: { answeredAt: n.answeredAt } });
      else respondError(ws, n.correlationId, "TIMEOUT", n.message);
    }
  }
}
