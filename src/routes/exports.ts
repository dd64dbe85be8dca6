/**
 * A project's whole history as a download (src/archive/exports.ts): asked for, built by the project's room in the
 * background, then fetched through a short-lived signed URL like any DataRef's bytes.
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectFor, principalOf } from "../auth/access";
import { signBlobUrl } from "../auth/signed-url";
import { EXPORT_STATUSES } from "../db/schema";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { notFound } from "../http/problem";
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
        url: z.string().meta({ format: "uri", description: "`/api/v1/blobs/{id}?token=…`: the only credential needed, for this one file" }),
        expires_at: timestamp,
      })
      .optional()
      .meta({ description: "Once ready: a fresh signed URL at each read, valid for minutes" }),
  })
  .meta({ id: "ProjectExport" });

interface ExportRow {
  id: string;
  status: (typeof EXPORT_STATUSES)[number];
  dataref_id: string | null;
  size: number | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
}

const CONTENT =
  'One gzip file of NDJSON: a first line `{type: "export"}`, then a line per record, each with its `type`: `task` (its row; an archived ' +
  "task also its `view` as the API answered it when it moved), `dependency`, `note`, `intervention`, `usage`, `code_review` (rows as stored) " +
  "and `event` (as `GET /api/v1/projects/{id}/events` answers it): first the archived tasks' records, then those still in the database.";

exportRoutes.post(
  "/:id/exports",
  documented({
    id: "createProjectExport",
    tag: "Projects",
    summary: "Export the project's history",
    description: `Members of the project and admins. Starts building the project's whole history, archived and live, as one download.\n\n${CONTENT}`,
    caller: "person",
    responses: { 202: z.object({ id }).meta({ id: "ProjectExportStarted" }) },
  }),
  person("member"),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"), "write");
    const p = principalOf(c);
    const exportId = crypto.randomUUID();
    await (await archiveDb(c, project.id))
      .prepare("INSERT INTO project_exports (id, project_id, status, requested_by, created_at) VALUES (?1, ?2, 'pending', ?3, ?4)")
      .bind(exportId, project.id, p.kind === "user" ? `user:${p.user.id}` : "system", new Date().toISOString())
      .run();
    await roomStub(c.env, project.id).startExport(exportId);
    return c.json({ id: exportId }, 202);
  },
);

async function exportOf(c: HubContext, projectId: string, exportId: string) {
  if (!isUuid(exportId)) throw notFound("Export");
  const row = await (await archiveDb(c, projectId))
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
    const row = await exportOf(c, project.id, c.req.param("xid"));
    const download =
      row.status === "ready" && row.dataref_id
        ? { download: await signBlobUrl(c.env, hubBaseUrl(c), { datarefId: row.dataref_id, method: "GET", size: row.size ?? 0 }) }
        : {};
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
