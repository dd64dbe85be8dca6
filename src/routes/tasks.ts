/**
 * Tasks, on both surfaces with the same shapes: people at /api/v1/tasks (JWT),
 * agents at /api/v1/server/tasks (API key). Reads go straight to D1; every
 * write goes through the project's room, whose lifecycle table decides who
 * may do what.
 */
import { taskSurface } from "./task-surface";
import { createRoute } from "./task-creation";
import { checkAssignedRoute, envelopeRoute, getRoute, listRoute, timelineRoute } from "./task-reading";
import { updateRoute } from "./task-update";
import { approveRoute, cancelRoute, completeRoute, failRoute, rejectRoute, retryRoute, startRoute } from "./task-transitions";
import { assignRoute, autoAssignRoute, matchingRoute } from "./task-assignment";
import { helpRoute } from "./task-help";
import { approvePlanRoute, planRoute, revisePlanRoute } from "./task-plans";
import { dependencyRoutes } from "./task-dependencies";
import { noteRoutes } from "./task-notes";
import { logRoutes } from "./task-logs";
import { taskUsageRoute } from "./usage";

/**
 * The task routes of one surface: the same operations, each under its own operation id and tag. They are registered in
 * this order (the API's description follows it, and /check must come before /:id).
 */
export function taskRoutes(surface: "people" | "agents") {
  const s = taskSurface(surface);
  if (!s.people) checkAssignedRoute(s);
  createRoute(s);
  listRoute(s);
  getRoute(s);
  envelopeRoute(s);
  updateRoute(s);
  cancelRoute(s);
  assignRoute(s);
  startRoute(s);
  completeRoute(s);
  failRoute(s);
  helpRoute(s);
  planRoute(s);
  approvePlanRoute(s);
  if (s.people) approveRoute(s);
  revisePlanRoute(s);
  rejectRoute(s);
  retryRoute(s);
  dependencyRoutes(s);
  matchingRoute(s);
  autoAssignRoute(s);
  noteRoutes(s);
  logRoutes(s);
  taskUsageRoute(s);
  timelineRoute(s);
  return s.r;
}
