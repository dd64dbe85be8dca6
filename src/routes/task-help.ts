/** An assignee asking a person (an intervention) or another agent of the project for help with its task. */
import { z } from "zod";
import { readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { fieldError } from "../http/problem";
import { helpBody } from "../protocol/hub-api";
import { runInRoom } from "../room/client";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { id } from "../views/fields";
import { takenBack, type TaskSurface } from "./task-surface";
import { taskFor, offloadFor } from "./task-access";

export async function askForHelp(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, helpBody);
  const target = body.target_session_id;
  // Another agent answers only questions: asking one for help or approval is refused rather than never answerable.
  if (target && (body.intervention_type ?? "question") !== "question") {
    throw fieldError("intervention_type", "must be question when target_session_id names a session to ask");
  }
  const context = await offloadFor(c, task.projectId)(body.context, OFFLOAD_DEPTH.whole);
  const { data } = await runInRoom(
    c,
    task.projectId,
    target
      ? { op: "ask_agent", taskId: task.id, question: body.question, context, targetSessionId: target }
      : { op: "help", taskId: task.id, question: body.question, context, interventionType: body.intervention_type ?? "help" },
  );
  return { intervention_id: data!.intervention_id as string, status: "pending" as const, task_id: task.id };
}

const helpAnswer = z.object({ intervention_id: id, status: z.literal("pending"), task_id: id });

/** POST /:id/help : a question to a person or an agent. */
export function helpRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/help",
    describe({
      id: "askForHelp",
      summary: "Ask for help",
      description:
        "Ask a person a question about a running task (→ `needs_human`), or ask another agent (`target_session_id`).\n\n" +
        `By the assignee, from \`running\` or \`needs_human\`. The task resumes when its last open intervention is answered. ${takenBack}\n\n` +
        "With `target_session_id` (the daemon's `ask_agent`), the question goes to the agent of that open session of the task's project " +
        "(422 naming `target_session_id` for any other session, or the task's own): its daemon is sent `intervention_for_session`, that agent " +
        "answers at `POST /api/v1/server/interventions/{id}/respond`, and the answer comes back to the asking session as `intervention_response`. " +
        "The task keeps its status meanwhile.",
      body: helpBody,
      responses: { 200: helpAnswer },
    }),
    write,
    async (c) => c.json(await askForHelp(c, taskId(c))),
  );
}
