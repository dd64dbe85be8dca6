/**
 * The agent daemon's task endpoints (seed §6 "Agent Task Lifecycle Endpoints"):
 * /api/v1/servers/tasks/... Same operations as the agent surface; transitions
 * answer `{status: "ok", task}` as the seed shows.
 */
import { Hono } from "hono";
import { agent, currentServer } from "../auth/middleware";
import { listTasks } from "../db/task-queries";
import type { HubContext, HubEnv } from "../http/context";
import { askForHelp, completeTask, failTask, startTask } from "./tasks";

export const daemonTaskRoutes = new Hono<HubEnv>();

const ok = (c: HubContext, task: unknown) => c.json({ status: "ok", task });

/** Tasks assigned to this server and waiting to be started, with their resolved inputs. */
daemonTaskRoutes.get("/poll", agent, async (c) => {
  const server = currentServer(c);
  const page = await listTasks(c.var.db, { projectIds: server.projectIds ?? null, statuses: ["assigned"], assignedServerId: server.id, limit: 200 });
  return c.json(page.tasks);
});
daemonTaskRoutes.post("/:id/start", agent, async (c) => ok(c, await startTask(c, c.req.param("id"))));
daemonTaskRoutes.post("/:id/complete", agent, async (c) => ok(c, await completeTask(c, c.req.param("id"))));
daemonTaskRoutes.post("/:id/fail", agent, async (c) => ok(c, await failTask(c, c.req.param("id"))));
daemonTaskRoutes.post("/:id/help", agent, async (c) => c.json(await askForHelp(c, c.req.param("id"))));
