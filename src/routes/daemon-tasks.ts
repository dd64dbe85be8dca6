/**
 * The agent daemon's task endpoints (seed §6 "Agent Task Lifecycle Endpoints"):
 * /api/v1/servers/tasks/... Same operations as the agent surface; transitions
 * answer `{status: "ok", task}` as the seed shows.
 */
import { Hono } from "hono";
import { z } from "zod";
import { taskSchema } from "../views/tasks";
import { agent, currentServer, roomAgent } from "../middleware/guards";
import { listTasksOnShards } from "../views/shard-lists";
import type { HubContext, HubEnv } from "../http/context";
import { documented } from "../openapi/operation";
import { helpBody } from "../protocol/hub-api";
import { completeBody } from "../protocol/task-response";
import { failRequest } from "../protocol/task-format";
import { id } from "../views/fields";
import { askForHelp } from "./task-help";
import { completeTask, failTask, startTask } from "./task-transitions";

export const daemonTaskRoutes = new Hono<HubEnv>();

const transitioned = z.object({ status: z.literal("ok"), task: taskSchema });
const helpAsked = z.object({ intervention_id: id, status: z.literal("pending"), task_id: id });

const ok = (c: HubContext, task: z.infer<typeof taskSchema>) => c.json({ status: "ok", task } satisfies z.infer<typeof transitioned>);

/** A transition the agent surface has too: its rule, and what is the same and what differs. */
const SAME_AS = (op: string, rule: string) =>
  `${rule} The same transition as \`POST /api/v1/server/tasks/{id}/${op}\`, answered as \`{status: "ok", task}\` (seed §6). ` +
  "Only the server the task is assigned to may; from another status, 409 `INVALID_TRANSITION`.";

/** Tasks assigned to this server and waiting to be started, with their resolved inputs. */
daemonTaskRoutes.get(
  "/poll",
  documented({
    id: "pollDaemonTasks",
    tag: "Daemon",
    summary: "Poll for assigned tasks",
    description:
      "Tasks assigned to the calling server and not yet started (a bare list, at most 200), but those waiting for a person's approval.\n\n" +
      "Each with its resolved inputs (`resolved_inputs`).",
    caller: "agent",
    responses: { 200: z.array(taskSchema) },
  }),
  agent,
  async (c) => {
    const server = currentServer(c);
    const page = await listTasksOnShards(c.env, c.var.db, {
      projectIds: server.projectIds ?? null,
      statuses: ["assigned"],
      assignedServerId: server.id,
      approved: true,
      limit: 200,
    });
    return c.json(page.tasks);
  },
);

daemonTaskRoutes.post(
  "/:id/start",
  documented({
    id: "startDaemonTask",
    tag: "Daemon",
    summary: "Start an assigned task",
    description: SAME_AS("start", "`assigned` → `running`."),
    caller: "agent",
    responses: { 200: transitioned },
  }),
  roomAgent,
  async (c) => ok(c, await startTask(c, c.req.param("id"))),
);

daemonTaskRoutes.post(
  "/:id/complete",
  documented({
    id: "completeDaemonTask",
    tag: "Daemon",
    summary: "Complete a task",
    description: "Complete a running task with its result.\n\n" + SAME_AS("complete", "`running` → `done`."),
    caller: "agent",
    body: completeBody,
    responses: { 200: transitioned },
  }),
  roomAgent,
  async (c) => ok(c, await completeTask(c, c.req.param("id"))),
);

daemonTaskRoutes.post(
  "/:id/fail",
  documented({
    id: "failDaemonTask",
    tag: "Daemon",
    summary: "Fail a task",
    description: SAME_AS(
      "fail",
      "Any unfinished status but `pending` → `failed`; `error` is text or an error block `{code, message, details?, recoverable?}`.",
    ),
    caller: "agent",
    body: failRequest,
    bodyRequired: false,
    responses: { 200: transitioned },
  }),
  roomAgent,
  async (c) => ok(c, await failTask(c, c.req.param("id"))),
);

daemonTaskRoutes.post(
  "/:id/help",
  documented({
    id: "askHelpDaemonTask",
    tag: "Daemon",
    summary: "Ask for help",
    description:
      "Ask people for help with a task (an intervention).\n\n" +
      "`running` (or `needs_human`) → `needs_human` until a person answers the intervention; with `target_session_id`, a question to that " +
      "session's agent, and the status stays. The same as `POST /api/v1/server/tasks/{id}/help`; only the server the task is assigned to may.",
    caller: "agent",
    body: helpBody,
    responses: { 200: helpAsked },
  }),
  roomAgent,
  async (c) => c.json((await askForHelp(c, c.req.param("id"))) satisfies z.infer<typeof helpAsked>),
);
