/**
 * Code health (API.md "Session files and code health"): the CLI's `orchestratia code scan|health|debt|priorities|review`
 * (orchestratia_agent/cli.py) on the agents' side, a project's scores and "Scan now" on the people's. A scan pushed to a
 * session's daemon comes back as its `architecture_snapshot` frame (routes/daemon-socket.ts), stored like a post.
 */
import { desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { agent, currentServer, person } from "../middleware/guards";
import { codeHealthSnapshots } from "../db/schema";
import type { Db } from "../db/client";
import { isFinalSession } from "../domain/session-lifecycle";
import { readJson } from "../http/body";
import type { HubEnv } from "../http/context";
import { conflict, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import { MAX_SNAPSHOT_BYTES, snapshotPost } from "../protocol/code-health";
import { linkStub } from "../server-link/client";
import { storeSnapshot } from "../code-health/store";
import {
  codeHealthPointView,
  codeHealthSchema,
  codeHealthView,
  noDataSchema,
  noReviewSchema,
  projectCodeHealthSchema,
  snapshotStoredSchema,
} from "../views/code-health";
import { taskFor } from "./task-access";
import { latestReview } from "./code-reviews";
import { codeReviewSchema, codeReviewView } from "../views/code-reviews";
import { sessionIn } from "./project-sessions";

export const codeHealthRoutes = { agents: new Hono<HubEnv>(), people: new Hono<HubEnv>() };

/** Scores kept in a project's answer to people. */
const HISTORY = 200;

const latestOf = (db: Db, projectId: string) =>
  db.query.codeHealthSnapshots.findFirst({ where: eq(codeHealthSnapshots.projectId, projectId), orderBy: desc(codeHealthSnapshots.receivedAt) });

codeHealthRoutes.agents.post(
  "/snapshot",
  documented({
    id: "postCodeHealthSnapshot",
    tag: "Code health",
    summary: "Submit a code health snapshot",
    description:
      "What `orchestratia code scan` posts: the snapshot the daemon's scanner made of a working tree (health score and grade, factors, tech " +
      "debt, hotspots, the module graph as Mermaid text, files, modules, dependencies). Its summary is kept with the project's earlier ones, " +
      `the whole snapshot as a JSON DataRef of the project; the event \`code_health_scanned\` is recorded. At most ${MAX_SNAPSHOT_BYTES / 1024 / 1024} MiB ` +
      "(413 beyond, nothing kept); 404 for a project the server does not serve.",
    caller: "agent",
    body: snapshotPost,
    bodyRequired: true,
    responses: { 201: snapshotStoredSchema },
  }),
  agent,
  async (c) => {
    const body = await readJson(c, snapshotPost);
    const project = await projectDataFor(c, body.project_id, "write");
    const server = currentServer(c);
    const result = await storeSnapshot(
      c.env,
      { projectId: project.id, server: { id: server.id, name: server.name, keyHash: server.apiKeyHash }, sessionId: null },
      body.snapshot,
    );
    c.var.d1Session?.caughtUpTo(result.bookmark);
    if (!result.ok) throw new Problem(result.problem.status, result.problem.code, result.problem.detail);
    const stored = result.data!.snapshot as { healthScore: number; healthGrade: string };
    return c.json({ health_score: stored.healthScore, health_grade: stored.healthGrade }, 201);
  },
);

codeHealthRoutes.agents.get(
  "/health/:project_id",
  documented({
    id: "getCodeHealthForAgent",
    tag: "Code health",
    summary: "The project's latest code health",
    description: 'What `orchestratia code health|debt|priorities` print: the newest snapshot\'s summary, or `{"status": "no_data"}` before the first scan.',
    caller: "agent",
    responses: { 200: z.union([codeHealthSchema, noDataSchema]) },
  }),
  agent,
  async (c) => {
    const project = await projectDataFor(c, c.req.param("project_id"));
    const latest = await latestOf(c.var.db, project.id);
    return c.json(latest ? codeHealthView(latest) : { status: "no_data" as const });
  },
);

codeHealthRoutes.agents.get(
  "/reviews/:task_id",
  documented({
    id: "getCodeReview",
    tag: "Code health",
    summary: "A task's code review",
    description:
      "What `orchestratia code review` prints: the task's latest judged review attempt (`status` pass, warn or fail, `score`, `attempt_number`, " +
      '`summary`, `findings`, `git_diff_stats`, `reviewer`), or `{"status": "no_review"}` before the first review comes (every attempt, pending ' +
      "and not reviewable ones too: GET /api/v1/tasks/{id}/reviews). " +
      "404 for a task the server cannot see.",
    caller: "agent",
    responses: { 200: z.union([codeReviewSchema, noReviewSchema]) },
  }),
  agent,
  async (c) => {
    const task = await taskFor(c, c.req.param("task_id"));
    const latest = await latestReview(c.var.db, task.id);
    return c.json(latest ? codeReviewView(latest) : { status: "no_review" as const });
  },
);

codeHealthRoutes.people.get(
  "/:id/code-health",
  documented({
    id: "getProjectCodeHealth",
    tag: "Code health",
    summary: "The project's code health and its history",
    description: "The newest snapshot's summary, and the score of each snapshot before it.",
    caller: "person",
    responses: { 200: projectCodeHealthSchema },
  }),
  person(),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const s = codeHealthSnapshots;
    const [latest, points] = await Promise.all([
      latestOf(c.var.db, project.id),
      c.var.db
        .select({
          id: s.id,
          healthScore: s.healthScore,
          healthGrade: s.healthGrade,
          techDebtHours: s.techDebtHours,
          scannedAt: s.scannedAt,
          receivedAt: s.receivedAt,
        })
        .from(s)
        .where(eq(s.projectId, project.id))
        .orderBy(desc(s.receivedAt))
        .limit(HISTORY),
    ]);
    return c.json({ latest: latest ? codeHealthView(latest) : null, history: points.reverse().map(codeHealthPointView) });
  },
);

codeHealthRoutes.people.post(
  "/:id/sessions/:sid/scan",
  documented({
    id: "scanSession",
    tag: "Code health",
    summary: "Scan a session's working directory",
    description:
      "Asks the session's daemon to scan its working directory (`scan_architecture`); the daemon sends the snapshot back on its socket " +
      "(`architecture_snapshot`) when the scan is done, and it is stored like a post (`code_health_scanned`). Writers only. 409 `SESSION_ENDED` " +
      "for a session that ended, `CONFLICT` for one without a working directory, `DAEMON_OFFLINE` when its daemon is not connected.",
    caller: "person",
    responses: { 202: z.object({ session_id: z.string(), status: z.literal("scan_requested") }).meta({ id: "ScanRequested" }) },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const { session, serverName } = await sessionIn(c, project.id, c.req.param("sid"));
    if (isFinalSession(session.status)) throw conflict(`Session "${session.name}" has ended`, "SESSION_ENDED");
    if (!session.workingDirectory) throw conflict(`Session "${session.name}" has no working directory to scan`);
    const sent = await linkStub(c.env, session.serverId).notifyConnected({
      type: "scan_architecture",
      session_id: session.id,
      project_id: project.id,
      working_directory: session.workingDirectory,
    });
    if (!sent) throw conflict(`The daemon of server "${serverName}" is not connected: start it (orchestratia-agent) and try again`, "DAEMON_OFFLINE");
    return c.json({ session_id: session.id, status: "scan_requested" as const }, 202);
  },
);
