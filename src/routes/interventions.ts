/** Interventions (questions from agents to people or orchestrators), on both surfaces. */
import { and, desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { isUuid } from "../http/fields";
import { z } from "zod";
import { projectFor, visibleProjectIds } from "../auth/access";
import { agent, person, roomAgent } from "../middleware/guards";
import { interventions, INTERVENTION_STATUSES } from "../db/schema";
import { inJsonList } from "../db/sql";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { notFound, Problem } from "../http/problem";
import { respondBody } from "../protocol/hub-api";
import { runInRoom } from "../room/client";
import { documented } from "../openapi/operation";
import { interventionSchema, interventionView } from "../views/tasks";
import { taskFor } from "./task-access";
import { findOnShards, readOnShards } from "../views/shard-lists";
import type { Db } from "../db/client";

const listQuery = z.object({
  task_id: z.uuid("must be a UUID").optional().meta({ description: "Only this task's" }),
  project_id: z.uuid("must be a UUID").optional().meta({ description: "Only this project's (without either: every project the caller can see)" }),
  status: z.enum(INTERVENTION_STATUSES, { error: `must be one of ${INTERVENTION_STATUSES.join(", ")}` }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

async function listInterventions(c: HubContext) {
  const q = readQuery(c, listQuery);
  const projectIds = q.task_id
    ? [(await taskFor(c, q.task_id)).projectId]
    : q.project_id
      ? [(await projectFor(c, q.project_id)).id]
      : await visibleProjectIds(c);
  if (projectIds?.length === 0) return [];
  // Each shard the projects live on, at once; the newest of all.
  const lists = await readOnShards(c.env, c.var.db, projectIds, (db, ids) =>
    db
      .select()
      .from(interventions)
      .where(
        and(
          ids ? inJsonList(interventions.projectId, ids) : undefined,
          q.task_id ? eq(interventions.taskId, q.task_id) : undefined,
          q.status ? eq(interventions.status, q.status) : undefined,
        ),
      )
      .orderBy(desc(interventions.createdAt))
      .limit(q.limit),
  );
  const rows = lists.flat().sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  return rows.slice(0, q.limit).map(interventionView);
}

async function respond(c: HubContext) {
  const id = c.req.param("id")!;
  // Found on the shard its project lives on; the caller's access to that project checked in the directory.
  const read = (db: Db) => db.query.interventions.findFirst({ where: eq(interventions.id, id), columns: { projectId: true } });
  const row = isUuid(id) ? (await findOnShards(c.env, c.var.db, read, (r) => r.projectId))?.found : undefined;
  if (!row) throw notFound("Intervention");
  try {
    await projectFor(c, row.projectId, "write");
  } catch (e) {
    throw e instanceof Problem && e.status === 404 ? notFound("Intervention") : e;
  }
  const body = await readJson(c, respondBody);
  // The room's answer points c.var.db at the project's shard.
  await runInRoom(c, row.projectId, { op: "respond", interventionId: id, response: body.response });
  const updated = await c.var.db.query.interventions.findFirst({ where: eq(interventions.id, id) });
  return interventionView(updated!);
}

export function interventionRoutes(surface: "people" | "agents") {
  const r = new Hono<HubEnv>();
  const people = surface === "people";
  r.get(
    "/",
    documented({
      id: people ? "listInterventions" : "agentListInterventions",
      tag: "Interventions",
      summary: "List interventions",
      description: "Questions and approvals asked of people, newest first.",
      caller: people ? "person" : "agent",
      query: listQuery,
      responses: { 200: z.array(interventionSchema) },
    }),
    people ? person() : agent,
    async (c) => c.json(await listInterventions(c)),
  );
  r.post(
    "/:id/respond",
    documented({
      id: people ? "respondToIntervention" : "agentRespondToIntervention",
      tag: "Interventions",
      summary: "Answer a pending intervention",
      description:
        (people
          ? "People answer any intervention. "
          : "Agents answer only `question` interventions, and a question asked of a session (`target_session_id`) only from that session's server " +
            "(403 `NOT_ALLOWED` for the others). ") +
        "An intervention already answered, cancelled or timed out is 409 `INTERVENTION_CLOSED`. The answer goes to the agent that asked; " +
        "its task (`needs_human`) goes back to `running` once its last pending intervention is answered. A question asked of a session " +
        "never held its task, whose status stays.",
      caller: people ? "person" : "agent",
      body: respondBody,
      responses: { 200: interventionSchema },
    }),
    people ? person("member") : roomAgent,
    async (c) => c.json(await respond(c)),
  );
  return r;
}
