/**
 * A project's whole history as a download (src/archive/exports.ts): asked for, built by the project's room in the
 * background, then fetched through a short-lived signed URL that only these routes hand out (the file is no DataRef).
 */
import { onEveryShard } from "../db/shards";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor, principalOf } from "../auth/access";
import { BlobUrlRefused, signExportUrl, verifyExportUrl } from "../auth/signed-url";
import { EXPORT_CONTENT_TYPE, exportKey, EXPORT_TIMEOUT_MS, EXPORTS_AT_ONCE } from "../archive/exports";
import { withBlobHeaders } from "../http/blob-headers";
import { EXPORT_STATUSES } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { notFound, Problem, tooManyRequests } from "../http/problem";
import { documented } from "../openapi/operation";
import { person } from "../middleware/guards";
import { roomStub } from "../room/client";
import { id, timestamp } from "../views/fields";
import { archiveDb } from "./archived-tasks";

export const exportRoutes = new Hono<HubEnv>();

const exportSchema = z
  .object({
    id,
    status: z.enum(EXPORT_STATUSES).meta({ description: "`pending` while it is built, then `ready` (with `download`) or `failed` (with `error`)" }),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
    size: z.int().nullable().meta({ description: "Bytes of the gzip file, once ready" }),
    error: z.string().nullable(),
    download: z
      .object({
        url: z.string().meta({ format: "uri", description: "`/api/v1/exports/{xid}?token=…`: the only credential needed, for this one file" }),
        expires_at: timestamp,
      })
      .optional()
      .meta({ description: "Once ready: a fresh signed URL at each read, valid for minutes" }),
  })
  .meta({ id: "ProjectExport" });

interface ExportRow {
  id: string;
  status: (typeof EXPORT_STATUSES)[number];
  size: number | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

const CONTENT =
  'One gzip file of NDJSON: a first line `{type: "export"}`, then a line per record, each with its `type`: `task` (its row; an archived ' +
  "task also its `view` as the API answered it when it moved), `dependency`, `note`, `intervention`, `usage`, `code_review` (rows as stored) " +
  "and `event` (as `GET /api/v1/projects/{id}/events` answers it), `permission_log` (its rows) and `delivery` (a webhook or other delivery's row with its " +
  "`attempts`): first the archived records (tasks, then the permission log, then deliveries), then those still in the database as they were when " +
  "the export began (the first line's `seq` is the log's head then). The permission log and deliveries are there as long as the hub keeps them: " +
  "in the archive for a project that archives, else `PERMISSION_LOG_DAYS` and a week.";

exportRoutes.post(
  "/:id/exports",
  documented({
    id: "createProjectExport",
    tag: "Projects",
    summary: "Export the project's history",
    description:
      `Members of the project and admins. Starts building the project's whole history, archived and live, as one download. ` +
      `At most ${EXPORTS_AT_ONCE} exports of a project are built at once: another is 429 \`RATE_LIMITED\` with \`Retry-After\`. ` +
      `One still pending after ${EXPORT_TIMEOUT_MS / 60000} minutes was interrupted and reads as \`failed\`.\n\n${CONTENT}`,
    caller: "person",
    responses: { 202: z.object({ id }).meta({ id: "ProjectExportStarted" }) },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const p = principalOf(c);
    const exportId = crypto.randomUUID();
    const d1 = await archiveDb(c, project.id);
    await failStalled(d1, project.id);
    const building = await d1
      .prepare("SELECT count(*) AS n FROM project_exports WHERE project_id = ?1 AND status = 'pending'")
      .bind(project.id)
      .first<number>("n");
    if ((building ?? 0) >= EXPORTS_AT_ONCE) {
      throw tooManyRequests(`${building} exports of this project are being built; ask again once one is ready or failed`, 60);
    }
    await d1
      .prepare("INSERT INTO project_exports (id, project_id, status, requested_by, created_at) VALUES (?1, ?2, 'pending', ?3, ?4)")
      .bind(exportId, project.id, p.kind === "user" ? `user:${p.user.id}` : "system", new Date().toISOString())
      .run();
    await roomStub(c.env, project.id).startExport(exportId);
    return c.json({ id: exportId }, 202);
  },
);

/** Exports pending past EXPORT_TIMEOUT_MS stopped with their room (evicted, redeployed): reported failed. */
async function failStalled(d1: D1Database, projectId: string) {
  await d1
    .prepare("UPDATE project_exports SET status = 'failed', error = ?3, completed_at = ?4 WHERE project_id = ?1 AND status = 'pending' AND created_at < ?2")
    .bind(
      projectId,
      new Date(Date.now() - EXPORT_TIMEOUT_MS).toISOString(),
      "The export stopped before it was done (its builder was interrupted); ask for another",
      new Date().toISOString(),
    )
    .run();
}

async function exportOf(c: HubContext, projectId: string, exportId: string) {
  if (!isUuid(exportId)) throw notFound("Export");
  const row = await (
    await archiveDb(c, projectId)
  )
    .prepare("SELECT * FROM project_exports WHERE id = ?1 AND project_id = ?2")
    .bind(exportId, projectId)
    .first<ExportRow>();
  if (!row) throw notFound("Export");
  return row;
}

exportRoutes.get(
  "/:id/exports/:xid",
  documented({
    id: "getProjectExport",
    tag: "Projects",
    summary: "An export of the project's history",
    description: "Members of the project and admins; an export of another project is 404. Once `ready`, `download` is a signed URL to the file.",
    caller: "person",
    responses: { 200: exportSchema },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    await failStalled(await archiveDb(c, project.id), project.id);
    const row = await exportOf(c, project.id, c.req.param("xid"));
    const download = row.status === "ready" ? { download: await signExportUrl(c.env, hubBaseUrl(c), row.id, row.size ?? 0) } : {};
    return c.json({
      id: row.id,
      status: row.status,
      created_at: row.created_at,
      completed_at: row.completed_at,
      size: row.size,
      error: row.error,
      ...download,
    });
  },
);

/** The file's bytes: /api/v1/exports/{xid}?token=… — the signed URL the export's read handed out is the only credential. */
export const exportFileRoutes = new Hono<HubEnv>();
exportFileRoutes.use("*", withBlobHeaders);

exportFileRoutes.get(
  "/:xid",
  documented({
    id: "downloadProjectExport",
    tag: "Projects",
    summary: "Download an export of the project's history",
    description:
      "The export's gzip file, from the signed URL `GET /api/v1/projects/{id}/exports/{xid}` hands out once it is ready (as an attachment). " +
      "401 `INVALID_URL` for an expired or tampered token, 403 `URL_NOT_FOR_THIS` for a token of another export or of a DataRef.",
    caller: "signed-url",
    query: z.object({ token: z.string().meta({ description: "The signed token of the URL the hub handed out" }) }),
    responses: { 200: { description: "The gzip file", contentType: EXPORT_CONTENT_TYPE } },
  }),
  async (c) => {
    const xid = c.req.param("xid");
    await verifyExportUrl(c.env, c.req.query("token"), xid).catch((e: unknown) => {
      if (e instanceof BlobUrlRefused) throw new Problem(e.status, e.status === 401 ? "INVALID_URL" : "URL_NOT_FOR_THIS", e.message);
      throw e;
    });
    // Only the export's id is known here: every shard is asked at once.
    const found = await onEveryShard(c.env, (d1) =>
      d1.prepare("SELECT project_id, status FROM project_exports WHERE id = ?1").bind(xid).first<{ project_id: string; status: string }>(),
    );
    const row = found.find((r) => r !== null);
    const object = row?.status === "ready" ? await c.env.BLOBS.get(exportKey(row.project_id, xid)) : null;
    if (!object) throw notFound("Export");
    return new Response(object.body, {
      headers: {
        "Content-Type": EXPORT_CONTENT_TYPE,
        "Content-Length": String(object.size),
        "Content-Disposition": `attachment; filename="history-${xid}.ndjson.gz"`,
      },
    });
  },
);
