/** Builds the hub's HTTP app: middleware, error handling and the routers of each surface. */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { methodNotAllowed } from "hono/method-not-allowed";
import { dbOf } from "./db/client";
import { BOOKMARK_HEADER, sessionStartOf } from "./db/d1-bookmarks";
import { RequestSession } from "./db/request-session";
import { countedD1, countingRoundTrips, noRoundTrips } from "./db/round-trips";
import type { HubEnv } from "./http/context";
import { limitedBody } from "./http/body-limit";
import { apiCors } from "./http/cors";
import { datarefLinks } from "./middleware/dataref-links";
import { logFailure } from "./http/failure-log";
import { Problem, problemOfDomainError, quotingRequestId } from "./http/problem";
import { withRequestId } from "./http/request-id";
import { appendHeader, noSniff, setHeader } from "./http/response-headers";
import { logRequests } from "./http/request-log";
import { discardOffloadsOnError } from "./middleware/request-offloads";
import { agentSessionRoutes } from "./routes/agent-sessions";
import { remoteRoutes } from "./routes/remote";
import { accessGrantRoutes } from "./routes/access-grants";
import { connectRoutes } from "./routes/tunnel-connect";
import { authRoutes } from "./routes/auth";
import { daemonTaskRoutes } from "./routes/daemon-tasks";
import { daemonSocketRoutes } from "./routes/daemon-socket";
import { blobRoutes, datarefRoutes } from "./routes/datarefs";
import { interventionRoutes } from "./routes/interventions";
import { inboxRoutes } from "./routes/inbox";
import { fileTransferRoutes } from "./routes/file-transfers";
import { telegramAccountRoutes, telegramSetupRoutes, telegramWebhookRoutes } from "./routes/telegram";
import { slackAccountRoutes } from "./routes/slack-account";
import { slackDoorRoutes } from "./routes/slack-doors";
import { slackAdminRoutes, slackOauthRoutes } from "./routes/slack";
import { slackChannelRoutes } from "./routes/slack-channels";
import { webhookRoutes } from "./routes/webhooks";
import { telemetryExportRoutes } from "./routes/telemetry-export";
import { budgetRoutes } from "./routes/budgets";
import { exportFileRoutes, exportRoutes } from "./routes/exports";
import { codeReviewRoutes } from "./routes/code-reviews";
import { templateRoutes } from "./routes/templates";
import { triggerRoutes } from "./routes/triggers";
import { triggerHookRoutes } from "./routes/trigger-hook";
import { runRoutes } from "./routes/runs";
import { scheduleRoutes } from "./routes/schedules";
import { approvalRuleRoutes } from "./routes/approval-rules";
import { projectSessionRoutes } from "./routes/project-sessions";
import { liveRoutes } from "./routes/live";
import { taskRoutes } from "./routes/tasks";
import { healthRoutes } from "./routes/health";
import { permissionLogAgentRoutes, permissionLogRoutes } from "./routes/permission-log";
import { projectRoutes } from "./routes/projects";
import { sessionFileRoutes } from "./routes/session-files";
import { registrationRoutes } from "./routes/registration";
import { serverRoutes } from "./routes/servers";
import { userRoutes } from "./routes/users";
import { inviteRoutes } from "./routes/invites";
import { referenceRoutes } from "./routes/reference";
import { mcpRoutes } from "./routes/mcp";
import { mcpClientRoutes } from "./routes/mcp-clients";
import { personalTokenRoutes } from "./routes/personal-tokens";
import { a2aRoutes } from "./a2a/routes";
import { codeHealthRoutes } from "./routes/code-health";
import { usageRoutes } from "./routes/usage";
import { otlpRoutes } from "./routes/otlp";

export function buildApp() {
  const app = new Hono<HubEnv>({ strict: false });

  app.use("*", withRequestId);
  app.use("*", noSniff);
  // Outside everything else, so that its line sees the final status (refusals, 405s, errors turned into problems).
  app.use("*", logRequests);

  // Before everything else that can refuse: a preflight is answered here (204) rather than as a 404/405, and
  // refusals further in (405, 401, 413) still carry the CORS headers a browser needs to read them.
  app.use("/api/*", apiCors);

  // Hono answers a wrong method on an existing path with its not-found handler; this turns that into 405.
  app.use(
    "*",
    methodNotAllowed({
      app,
      // hono adds HEAD beside GET; the hub's Allow names the methods its routes declare.
      onMethodNotAllowed: (c, methods) => {
        const allowed = methods.filter((m) => m !== "HEAD").join(", ");
        return new Problem(405, "METHOD_NOT_ALLOWED", `${c.req.method} is not allowed here; use ${allowed}`, undefined, { Allow: allowed }).toResponse();
      },
    }),
  );

  // Every D1 call the request makes (through c.var.db or c.env.DB) is counted, and reported beside the room's. It
  // runs in the request's D1 session, which starts from the caller's bookmark: with read replication on, a replica
  // near the Worker may answer, but never one older than what the caller saw. Without a bookmark the session starts
  // at the primary, so callers that carry none (the official CLI and daemon) still read their own writes.
  app.use("*", async (c, next) => {
    const start = sessionStartOf(c.req.header(BOOKMARK_HEADER));
    if (!start.ok)
      throw new Problem(400, "INVALID_BOOKMARK", `${BOOKMARK_HEADER} ${start.message}`, [{ path: `header.${BOOKMARK_HEADER}`, message: start.message }]);
    const binding = c.env.DB;
    const DB = countedD1(binding);
    c.env = { ...c.env, DB };
    c.set("db", dbOf(DB));
    const session = new RequestSession(binding, start.start);
    c.set("d1Session", session);
    const trips = noRoundTrips();
    const began = performance.now();
    await countingRoundTrips(trips, next, session);
    // A socket's upgrade answer is handed on as it is.
    if (c.res.status === 101) return;
    // What the bill is made of goes in entries of its own, so the existing entry keeps its exact form for those who read it.
    appendHeader(c, "Server-Timing", `worker;desc="d1 queries=${trips.d1}"`);
    // The Worker's own time for the request (its clock moves on I/O): beside a client's time, what was spent getting here.
    appendHeader(c, "Server-Timing", `worker-total;dur=${(performance.now() - began).toFixed(0)}`);
    appendHeader(c, "Server-Timing", `worker-d1;desc="rows read=${trips.rowsRead}, rows written=${trips.rowsWritten}, calls uncounted=${trips.uncounted}"`);
    appendHeader(c, "Server-Timing", `worker-do;desc="requests=${trips.doRequests}"`);
    const bookmark = session.bookmark();
    if (bookmark) setHeader(c, BOOKMARK_HEADER, bookmark);
  });

  app.use("*", limitedBody);

  app.use("/api/v1/*", datarefLinks);
  app.use("/api/v1/*", discardOffloadsOnError);

  const api = new Hono<HubEnv>({ strict: false });
  api.route("/health", healthRoutes);
  api.route("/auth", authRoutes);
  api.route("/users", userRoutes);
  api.route("/invites", inviteRoutes);
  api.route("/projects", projectRoutes);
  api.route("/projects", liveRoutes);
  api.route("/projects", projectSessionRoutes);
  api.route("/projects", webhookRoutes);
  api.route("/projects", telemetryExportRoutes);
  api.route("/projects", budgetRoutes);
  api.route("/projects", exportRoutes);
  api.route("/projects", codeReviewRoutes.projects);
  api.route("/projects", templateRoutes);
  api.route("/projects", triggerRoutes);
  api.route("/projects", runRoutes);
  api.route("/projects", scheduleRoutes);
  api.route("/projects", permissionLogRoutes);
  api.route("/projects", fileTransferRoutes.people);
  api.route("/projects", sessionFileRoutes);
  api.route("/server", fileTransferRoutes.agents);
  api.route("/server", permissionLogAgentRoutes);
  api.route("/server/architecture", codeHealthRoutes.agents);
  api.route("/projects", codeHealthRoutes.people);
  api.route("/projects", usageRoutes);
  api.route("/telegram", telegramSetupRoutes);
  api.route("/auth", telegramAccountRoutes);
  api.route("/auth", slackAccountRoutes);
  api.route("/slack", slackAdminRoutes);
  api.route("/projects", slackChannelRoutes);
  api.route("/auth", mcpClientRoutes);
  api.route("/auth", personalTokenRoutes);
  api.route("/projects", datarefRoutes.people);
  api.route("/server", datarefRoutes.agents);
  api.route("/blobs", blobRoutes);
  api.route("/exports", exportFileRoutes);
  api.route("/servers", registrationRoutes);
  api.route("/servers", serverRoutes);
  api.route("/servers/tasks", daemonTaskRoutes);
  api.route("/server", agentSessionRoutes);
  api.route("/server/remote", remoteRoutes);
  api.route("/access-grants", accessGrantRoutes.people);
  api.route("/server", accessGrantRoutes.agents);
  api.route("/projects", connectRoutes.people);
  api.route("/approval-rules", approvalRuleRoutes.people);
  api.route("/server", approvalRuleRoutes.agents);
  api.route("/tasks", codeReviewRoutes.tasks);
  api.route("/tasks", taskRoutes("people"));
  api.route("/server/tasks", taskRoutes("agents"));
  api.route("/interventions", interventionRoutes("people"));
  api.route("/server/interventions", interventionRoutes("agents"));
  api.route("/inbox", inboxRoutes);
  app.route("/api/v1", api);
  app.route("/ws/server", daemonSocketRoutes);
  app.route("/ws/tunnel", connectRoutes.socket);
  app.route("/telegram", telegramWebhookRoutes);
  app.route("/slack", slackDoorRoutes);
  app.route("/slack", slackOauthRoutes);
  app.route("/", triggerHookRoutes);
  app.route("/", otlpRoutes);
  app.route("/", mcpRoutes(app));
  app.route("/", a2aRoutes(app));
  app.route("/", referenceRoutes(app));

  app.notFound((c) => new Problem(404, "NOT_FOUND", `No endpoint at ${c.req.path}`).toResponse());

  app.onError((err, c) => {
    const problem = foreseenProblem(err);
    if (problem && problem.status < 500) return problem.toResponse();
    // Operators find the failure by the id the client is given; the client learns nothing about internals.
    logFailure(c, "request failed", err);
    return quotingRequestId(problem ?? new Problem(500, "INTERNAL_ERROR", "Something went wrong on the hub"), c.var.requestId).toResponse();
  });

  return app;
}

/** The problem an error stands for, when it is one the hub foresaw; undefined for any other failure. */
function foreseenProblem(err: Error): Problem | undefined {
  if (err instanceof Problem) return err;
  if (err instanceof HTTPException && err.status < 500) return new Problem(err.status as 400, "HTTP_ERROR", err.message || "The request was refused");
  return problemOfDomainError(err);
}
