/**
 * Elicitation on a 2025-era session: an agent's question about a task the session's client made reaches that client
 * as `elicitation/create` on its stream, when it declared it answers forms. The request's id names the question, so
 * the client's answer (a JSON-RPC response POSTed under the session) is taken back to it. Pure: no I/O.
 */

/** The ids of the hub's elicitation requests: `elicit:<intervention id>`. */
const PREFIX = "elicit:";

export const elicitationId = (interventionId: string) => `${PREFIX}${interventionId}`;
export const interventionOf = (id: unknown) => (typeof id === "string" && id.startsWith(PREFIX) ? id.slice(PREFIX.length) : undefined);

/** A question waiting for the client's answer. */
export interface OpenQuestion {
  interventionId: string;
  taskId: string;
  question: string;
}

/** What a session hears of an event: a question for people about a task it follows, or one no longer open. */
export function questionIn(frame: { event_type?: string; task_id?: string | null; data?: Record<string, unknown> }, followed: ReadonlySet<string>) {
  if (!frame.task_id || !followed.has(frame.task_id)) return undefined;
  const data = frame.data ?? {};
  const interventionId = typeof data.intervention_id === "string" ? data.intervention_id : undefined;
  if (!interventionId) return undefined;
  // A question one agent asked another session does not wait on a person.
  if (frame.event_type === "intervention_requested" && !data.target_session_id && typeof data.question === "string")
    return { asked: { interventionId, taskId: frame.task_id, question: data.question } satisfies OpenQuestion };
  if (frame.event_type === "intervention_responded" || frame.event_type === "intervention_timed_out") return { closed: interventionId };
  return undefined;
}

/** The request that asks the client: a form with one free-text answer. */
export const elicitationRequest = (q: OpenQuestion) => ({
  jsonrpc: "2.0",
  id: elicitationId(q.interventionId),
  method: "elicitation/create",
  params: {
    mode: "form",
    message: q.question,
    requestedSchema: { type: "object", properties: { answer: { type: "string", title: "Answer" } }, required: ["answer"] },
  },
});

/** The answer a client's response carries: the text to respond with, or undefined when it declined, dismissed or failed. */
export function answerIn(response: { result?: unknown; error?: unknown }): string | undefined {
  const result = response.result as { action?: unknown; content?: { answer?: unknown } } | undefined;
  return result?.action === "accept" && typeof result.content?.answer === "string" ? result.content.answer : undefined;
}
