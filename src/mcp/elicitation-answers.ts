/**
 * A 2025-era client's answers to the hub's elicitations: JSON-RPC responses POSTed under its session. Each names the
 * question it answers (session-questions.ts); the session confirms it asked it, and the answer is sent as the caller's
 * own REST request, so it obeys every rule an answer from the dashboard does.
 */
import type { Hono } from "hono";
import type { HubEnv } from "../http/context";
import { log } from "../runtime/log";
import { requestAs } from "../http/internal-request";
import type { McpRequest } from "./dispatch";
import { sessionStub } from "./session-client";
import { hubTasks } from "./tasks";
import { answerIn, interventionOf } from "./session-questions";

type Message = { id?: unknown; method?: unknown; result?: unknown; error?: unknown };

/** Whether every message is a response (what a client sends back to a server's requests), not a request of its own. */
export const allResponses = (messages: unknown[]) =>
  messages.length > 0 && messages.every((m) => typeof m === "object" && m !== null && (m as Message).method === undefined && "id" in m);

/** Takes each answer to the hub's questions to the question; responses to anything else change nothing. */
export async function takeAnswers(app: Hono<HubEnv>, request: McpRequest, sessionId: string, ownerKey: string, messages: Message[]) {
  const { c, caller } = request;
  const { interventions } = hubTasks(app, request);
  for (const message of messages) {
    const interventionId = interventionOf(message.id);
    if (!interventionId) continue;
    const asked = await sessionStub(c.env, sessionId).takeQuestion(ownerKey, interventionId);
    const answer = asked ? answerIn(message) : undefined;
    if (!asked || answer === undefined) continue;
    const sent = await requestAs(app, c, caller.headers, "POST", `${interventions}/${encodeURIComponent(interventionId)}/respond`, undefined, {
      response: answer,
    });
    // Answered by someone else first, or no longer the caller's to answer: the client asked nothing, so only the log hears of it.
    if (sent.status >= 400) log("info", "An MCP client's answer was not taken", { operation: "mcp_elicitation", task_id: asked.taskId, status: sent.status });
  }
}
