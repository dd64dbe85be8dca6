/**
 * A message without a task id becomes a task of the project, created in its room as the REST API creates one (the
 * same protocol checks, DataRef checks and offloads) and offered to the best-matching agent.
 */
import type { Message } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import { sha256Hex } from "../auth/secrets";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { pointerErrors } from "../datarefs/pointers";
import { canonicalJson } from "../domain/canonical-json";
import type { HubContext } from "../http/context";
import { Problem } from "../http/problem";
import { checkTaskProtocol } from "../protocol/hub-api";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";
import { runInRoom, runInRoomForView } from "../room/client";
import { newTask } from "../room/commands";
import { offloadFor } from "../routes/task-access";
import { asA2A, fieldsText } from "./errors";
import { taskFieldsOf } from "./messages";

/**
 * A new task from the message, in the project's room, then offered to the best-matching agent. The message's id is
 * the task's client id: the same message sent again answers the same task; other content under that id is refused.
 * Answers the task's id.
 */
export async function createFromMessage(c: HubContext, projectId: string, message: Message): Promise<string> {
  const fields = taskFieldsOf(message);
  const check = checkTaskProtocol({ structured_spec: fields.structuredSpec, requirements: fields.requirements });
  if (!check.ok) throw new RequestMalformedError(`the message's data parts: ${fieldsText(check.errors)}`);
  // A DataRef pointer in a message must name one of the project's, as in any body the REST API takes.
  const foreign = await pointerErrors(c.var.db, projectId, fields.payload, ["message"], c.env);
  if (foreign.length) throw new RequestMalformedError(fieldsText(foreign));
  const traceparent = parseTraceparent(c.req.header("traceparent"))?.traceparent ?? beginTrace().traceparent;
  const clientRequestHash = await sha256Hex(canonicalJson(fields.payload));
  const structuredSpec = (await offloadFor(c, projectId)(fields.structuredSpec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | null;
  const { result, view } = await asA2A(() =>
    runInRoomForView(c, projectId, {
      op: "create",
      task: newTask({
        title: fields.title,
        spec: fields.spec,
        type: "feature",
        priority: "normal",
        structuredSpec: structuredSpec ?? null,
        requirements: fields.requirements,
        warnings: check.warnings,
        origin: {
          clientId: message.messageId,
          clientRequestHash,
          payload: fields.payload,
          context: { conversationId: message.contextId || crypto.randomUUID() },
          routing: { source: "a2a" },
          traceparent,
        },
      }),
      dependencies: [],
    }),
  );
  if (result.unchanged || view.status !== "pending") return view.id;
  try {
    await runInRoom(c, projectId, { op: "auto_assign", taskId: view.id });
  } catch (e) {
    // No agent matches yet, or people approve agents' tasks first: the task waits, submitted, for the hub's next offer.
    if (!(e instanceof Problem)) throw e;
  }
  return view.id;
}
