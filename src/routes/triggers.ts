/**
 * A project's inbound triggers (API.md "Templates, schedules and triggers"): a URL and a secret per trigger that
 * instantiates a template when called (src/routes/trigger-hook.ts). Members and admins write them; anyone who sees the
 * project reads them. The secret is shown when made or rotated and never again.
 */
import { and, asc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { sha256Hex } from "../auth/secrets";
import { seal } from "../auth/sealed";
import { templates, triggers, type TriggerRow } from "../db/schema";
import { newWebhookSecret } from "../integrations/webhook-message";
import { readJson } from "../http/body";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { notFound, validationFailed } from "../http/problem";
import { person } from "../middleware/guards";
import { createTriggerBody, triggerProblems, updateTriggerBody } from "../protocol/triggers";
import { roomActor } from "../room/client";
import { triggerSchema, triggerView } from "../views/automation";
import { automationOperation } from "./templates";

export const triggerRoutes = new Hono<HubEnv>();

const triggerWithSecretSchema = triggerSchema
  .extend({
    secret: z.string().meta({
      description: "`whsec_…`: the bearer secret, the Standard Webhooks signing secret and GitHub's webhook secret at once; shown only here (and on rotation)",
    }),
  })
  .meta({ id: "TriggerWithSecret" });

const RULES =
  "`kind: http` fires on `POST /hooks/triggers/{id}` with `{parameters}` and `Authorization: Bearer <secret>` or Standard Webhooks " +
  "signature headers. `kind: github` fires on a GitHub repository webhook (content type `application/json`, the trigger's secret) " +
  "for the `github.events` it names: `issues.labeled` (only `github.label` when set), `issue_comment.created` (only a comment starting " +
  "with `github.command` when set), `pull_request.opened`. `github.mapping` names, per template parameter, a dotted path into the " +
  'event (`{"title": "issue.title"}`). 422 naming the field for: a template of another project, a `github` rule on an http trigger ' +
  "or none on a github trigger, an unknown event, a parameter or mapping naming a parameter the template lacks.";

async function triggerOf(c: HubContext, projectId: string) {
  const id = c.req.param("tid")!;
  if (!isUuid(id)) throw notFound("Trigger");
  const row = await c.var.db.query.triggers.findFirst({ where: and(eq(triggers.id, id), eq(triggers.projectId, projectId)) });
  if (!row) throw notFound("Trigger");
  return row;
}

async function templateParametersOf(c: HubContext, projectId: string, templateId: string) {
  const template = await c.var.db.query.templates.findFirst({
    where: and(eq(templates.id, templateId), eq(templates.projectId, projectId)),
    columns: { parameters: true },
  });
  return template?.parameters;
}

/** A new secret: its digest (for the bearer check) and itself sealed (for signatures, which need the secret). */
async function newSecret(c: HubContext) {
  const secret = newWebhookSecret();
  return { secret, secretHash: await sha256Hex(secret), secretSealed: await seal(c.env.DATA_KEY, secret) };
}

const view = (c: HubContext, row: TriggerRow) => triggerView(row, hubBaseUrl(c));

triggerRoutes.post(
  "/:id/triggers",
  automationOperation({
    id: "createTrigger",
    summary: "Add an inbound trigger",
    description: `Members of the project and admins. The answer carries the trigger's \`url\` and its \`secret\`, shown this once.\n\n${RULES}`,
    body: createTriggerBody,
    responses: { 201: triggerWithSecretSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const body = await readJson(c, createTriggerBody);
    const parameters = await templateParametersOf(c, project.id, body.template_id);
    if (!parameters) throw validationFailed([{ path: "template_id", message: "must be a template of the project" }]);
    const problems = triggerProblems(body.kind, parameters, { parameters: body.parameters, github: body.github ?? null });
    if (problems.length) throw validationFailed(problems);
    const { secret, ...sealed } = await newSecret(c);
    const now = new Date().toISOString();
    const row: TriggerRow = {
      id: crypto.randomUUID(),
      projectId: project.id,
      templateId: body.template_id,
      name: body.name ?? null,
      kind: body.kind,
      ...sealed,
      parameters: body.parameters,
      github: body.kind === "github" ? body.github! : null,
      paused: false,
      createdBy: roomActor(c).label,
      createdAt: now,
      updatedAt: now,
    };
    await c.var.db.insert(triggers).values(row);
    // Shown here and on rotation only (and to a replay of either, from an answer kept sealed).
    c.set("secretResponse", "sealed");
    return c.json({ ...view(c, row), secret }, 201);
  },
);

triggerRoutes.get(
  "/:id/triggers",
  automationOperation({
    id: "listTriggers",
    summary: "The project's triggers, oldest first",
    responses: { 200: z.object({ triggers: z.array(triggerSchema) }) },
  }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    const rows = await c.var.db.select().from(triggers).where(eq(triggers.projectId, project.id)).orderBy(asc(triggers.createdAt), asc(triggers.id));
    return c.json({ triggers: rows.map((r) => view(c, r)) });
  },
);

triggerRoutes.get(
  "/:id/triggers/:tid",
  automationOperation({ id: "getTrigger", summary: "A trigger of the project (never its secret)", responses: { 200: triggerSchema } }),
  person("viewer"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"));
    return c.json(view(c, await triggerOf(c, project.id)));
  },
);

triggerRoutes.patch(
  "/:id/triggers/:tid",
  automationOperation({
    id: "updateTrigger",
    summary: "Change a trigger",
    description:
      "Members of the project and admins. `name`, `parameters` (replaced whole), `github` (replaced whole; github triggers only) and " +
      "`paused` (a paused trigger answers its calls 409 `TRIGGER_PAUSED` and makes nothing). Its template, kind and secret stay " +
      `(rotate the secret with \`POST .../secret\`).\n\n${RULES}`,
    body: updateTriggerBody,
    responses: { 200: triggerSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const before = await triggerOf(c, project.id);
    const body = await readJson(c, updateTriggerBody);
    const parameters = (await templateParametersOf(c, project.id, before.templateId)) ?? [];
    const problems = triggerProblems(before.kind, parameters, { parameters: body.parameters, github: body.github });
    if (problems.length) throw validationFailed(problems);
    const changes = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.parameters !== undefined ? { parameters: body.parameters } : {}),
      ...(body.github !== undefined ? { github: body.github } : {}),
      ...(body.paused !== undefined ? { paused: body.paused } : {}),
      updatedAt: new Date().toISOString(),
    };
    const [row] = await c.var.db.update(triggers).set(changes).where(eq(triggers.id, before.id)).returning();
    if (!row) throw notFound("Trigger");
    return c.json(view(c, row));
  },
);

triggerRoutes.delete(
  "/:id/triggers/:tid",
  automationOperation({
    id: "deleteTrigger",
    summary: "Delete a trigger",
    description: "Members of the project and admins. Its URL answers 404 from now on; its runs stay.",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const trigger = await triggerOf(c, project.id);
    await c.var.db.delete(triggers).where(eq(triggers.id, trigger.id));
    return c.body(null, 204);
  },
);

triggerRoutes.post(
  "/:id/triggers/:tid/secret",
  automationOperation({
    id: "rotateTriggerSecret",
    summary: "Rotate a trigger's secret",
    description:
      "Members of the project and admins. The trigger gets a new secret, shown in this answer only; the old one stops working at once " +
      "(bearer calls, signatures and GitHub deliveries signed with it are 401). Put the new one wherever the old one was (GitHub: the " +
      "repository's Settings → Webhooks → the hook → Secret).",
    responses: { 200: triggerWithSecretSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id"), "write");
    const trigger = await triggerOf(c, project.id);
    const { secret, ...sealed } = await newSecret(c);
    const [row] = await c.var.db
      .update(triggers)
      .set({ ...sealed, updatedAt: new Date().toISOString() })
      .where(eq(triggers.id, trigger.id))
      .returning();
    if (!row) throw notFound("Trigger");
    c.set("secretResponse", "sealed");
    return c.json({ ...view(c, row), secret });
  },
);
