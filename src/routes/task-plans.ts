/** A task's plan: submitted by its assignee, approved or sent back with feedback by a person. */
import { readJson } from "../http/body";
import { planBody, reviseBody } from "../protocol/hub-api";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { taskSchema } from "../views/tasks";
import { takenBack, type TaskSurface } from "./task-surface";
import { offloadFor } from "./task-access";
import { transition } from "./task-transitions";

/** POST /:id/plan : submitted for review. */
export function planRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/plan",
    describe({
      id: "submitPlan",
      summary: "Submit a plan",
      description:
        "Submit a plan for review (`planning` → `plan_review`).\n\n" +
        `By the assignee; 409 \`TASK_AWAITING_APPROVAL\` while the task waits for a person's approval. A large plan goes to R2 as a DataRef. ${takenBack}`,
      body: planBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) =>
      c.json(
        await transition(c, taskId(c), async (id, projectId) => ({
          op: "plan",
          taskId: id,
          plan: await offloadFor(c, projectId)((await readJson(c, planBody)).plan, OFFLOAD_DEPTH.whole),
        })),
      ),
  );
}

/** POST /:id/approve-plan : the work goes ahead. */
export function approvePlanRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/approve-plan",
    describe({
      id: "approvePlan",
      summary: "Approve a plan",
      description:
        "Approve the plan (`plan_review` → `running`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`); 409 `UNRESOLVED_DEPENDENCIES` while the task is blocked.",
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "approve_plan", taskId: id }))),
  );
}

/** POST /:id/revise-plan : back to planning with feedback. */
export function revisePlanRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/revise-plan",
    describe({
      id: "revisePlan",
      summary: "Ask for plan changes",
      description:
        "Send the plan back with feedback (`plan_review` → `planning`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`). The feedback is the task's `plan_feedback`.",
      body: reviseBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "revise_plan", taskId: id, feedback: (await readJson(c, reviseBody)).feedback }))),
  );
}
