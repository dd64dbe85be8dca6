/**
 * DataRefs: large payloads in R2 behind signed, short-lived URLs (API.md
 * "DataRefs"). Creating one and minting its URLs needs access to its project;
 * moving the bytes needs only the URL.
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { isUuid } from "../http/fields";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { blobKey } from "../datarefs/blobs";
import { putComputingSha256 } from "../datarefs/hashing-put";
import { agent, person } from "../middleware/guards";
import { BlobUrlRefused, signBlobUrl, UPLOAD_URL_TTL_SECONDS, verifyBlobUrl } from "../auth/signed-url";
import { nowIso } from "../db/client";
import { DIRECTORY, shardDb } from "../db/shards";
import { findOnShards } from "../views/shard-lists";
import { datarefs } from "../db/schema";
import { parseByteRange } from "../domain/byte-range";
import { readJson } from "../http/body";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, fieldError, notFound, Problem } from "../http/problem";
import { roomActor, roomStub } from "../room/client";
import { documented } from "../openapi/operation";
import { BLOB_HEADERS, contentDisposition, isHeaderSafeFilename, isMediaType, servedContentType, withBlobHeaders } from "../http/blob-headers";
import { datarefView, datarefSchema, datarefWithDownloadSchema, newDatarefSchema, type DatarefRow } from "../views/datarefs";

/** Largest object one PUT may carry (R2's single-upload limit). */
export const MAX_DATAREF_BYTES = 5 * 1024 ** 3;

const objectKey = (d: Pick<DatarefRow, "projectId" | "id">) => blobKey(d.projectId, d.id);

const createBody = z.object({
  project_id: z.uuid("must be a UUID").optional(),
  content_type: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(255)
    .refine(isMediaType, "must be a media type: type/subtype with optional ; name=value parameters, no commas (e.g. text/plain; charset=utf-8)")
    .default("application/octet-stream"),
  size: z.int("must be an integer").min(0, "must not be negative").max(MAX_DATAREF_BYTES, `must be at most ${MAX_DATAREF_BYTES} bytes`),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex digits")
    .transform((h) => h.toLowerCase())
    .optional(),
  filename: z.string().max(500).refine(isHeaderSafeFilename, "must not contain control characters (CR, LF, tab, …) or a lone UTF-16 surrogate").optional(),
});

async function createDataref(c: HubContext, projectIdFromPath?: string) {
  const body = await readJson(c, createBody);
  const projectId = projectIdFromPath ?? body.project_id;
  if (!projectId) throw fieldError("project_id", "is required");
  const project = await projectDataFor(c, projectId, "write");
  const now = Date.now();
  const row: DatarefRow = {
    id: crypto.randomUUID(),
    projectId: project.id,
    status: "pending",
    contentType: body.content_type,
    size: body.size,
    sha256: body.sha256 ?? null,
    filename: body.filename ?? null,
    createdBy: roomActor(c).label,
    createdAt: new Date(now).toISOString(),
    uploadExpiresAt: new Date(now + UPLOAD_URL_TTL_SECONDS * 1000).toISOString(),
    completedAt: null,
  };
  await c.var.db.insert(datarefs).values(row);
  c.executionCtx.waitUntil(roomStub(c.env, project.id).watchUpload(row.uploadExpiresAt));
  const upload = await signBlobUrl(c.env, hubBaseUrl(c), { datarefId: row.id, method: "PUT", size: row.size });
  return c.json({ dataref: datarefView(row), upload: { method: "PUT" as const, ...upload } }, 201);
}

/**
 * A DataRef by its id alone, on the shard its project lives on; from here on the request reads and writes its row
 * there (`c.var.db`).
 */
async function datarefOnShards(c: HubContext, id: string): Promise<DatarefRow | undefined> {
  if (!isUuid(id)) return undefined;
  const at = await findOnShards(
    c.env,
    c.var.db,
    (db) => db.query.datarefs.findFirst({ where: eq(datarefs.id, id) }),
    (d) => d.projectId,
  );
  if (at && at.shard !== DIRECTORY) c.set("db", shardDb(c.env, at.shard));
  return at?.found;
}

/** A DataRef's metadata, with a fresh download URL once its bytes are in. */
async function describeDataref(c: HubContext, id: string, projectIdFromPath?: string) {
  const row = await datarefOnShards(c, id);
  if (!row || (projectIdFromPath && row.projectId !== projectIdFromPath)) throw notFound("DataRef");
  try {
    await projectDataFor(c, row.projectId);
  } catch (e) {
    throw e instanceof Problem && e.status === 404 ? notFound("DataRef") : e;
  }
  const download = row.status === "complete" ? await signBlobUrl(c.env, hubBaseUrl(c), { datarefId: row.id, method: "GET", size: row.size }) : null;
  return c.json({ ...datarefView(row), ...(download ? { download } : {}) });
}

const CREATE_RULES =
  "Declares the object: its exact `size` (at most 5 GiB), its `content_type` (default `application/octet-stream`), optionally its `sha256` " +
  "(then R2 checks the bytes against it) and a `filename` for downloads (no control characters; 422 otherwise). Answers with a signed upload URL, good for 15 minutes and for this object only: " +
  "`PUT` the bytes there. A DataRef whose bytes do not arrive in time is removed.";

const DESCRIBE_RULES =
  "Its metadata; once its bytes are in, also a fresh signed `download` URL (10 minutes, honours `Range`). " +
  "A DataRef of a project the caller cannot see is a 404, as for one that does not exist.";

export const datarefRoutes = {
  /** /api/v1/projects/{id}/datarefs — people. */
  people: new Hono<HubEnv>()
    .post(
      "/:projectId/datarefs",
      documented({
        id: "createProjectDataref",
        tag: "DataRefs",
        summary: "Create a DataRef",
        description:
          "Create a DataRef in a project and get its upload URL.\n\n" +
          `${CREATE_RULES} Members and admins; \`project_id\` in the body is ignored (the path names the project).`,
        caller: "person",
        body: createBody,
        responses: { 201: newDatarefSchema },
      }),
      person("member"),
      (c) => createDataref(c, c.req.param("projectId")),
    )
    .get(
      "/:projectId/datarefs/:id",
      documented({
        id: "getProjectDataref",
        tag: "DataRefs",
        summary: "Get a DataRef",
        description: "A DataRef of the project, with a download URL once complete.\n\n" + DESCRIBE_RULES,
        caller: "person",
        responses: { 200: datarefWithDownloadSchema },
      }),
      person(),
      (c) => describeDataref(c, c.req.param("id"), c.req.param("projectId")),
    ),
  /** /api/v1/server/datarefs — agents. */
  agents: new Hono<HubEnv>()
    .post(
      "/datarefs",
      documented({
        id: "createDataref",
        tag: "DataRefs",
        summary: "Create a DataRef",
        description: "Create a DataRef and get its upload URL.\n\n" + `${CREATE_RULES} \`project_id\` is required: a project the server may work in.`,
        caller: "agent",
        body: createBody,
        responses: { 201: newDatarefSchema },
      }),
      agent,
      (c) => createDataref(c),
    )
    .get(
      "/datarefs/:id",
      documented({
        id: "getDataref",
        tag: "DataRefs",
        summary: "Get a DataRef",
        description: "A DataRef, with a download URL once complete.\n\n" + DESCRIBE_RULES,
        caller: "agent",
        responses: { 200: datarefWithDownloadSchema },
      }),
      agent,
      (c) => describeDataref(c, c.req.param("id")),
    ),
};

function refused(e: unknown): never {
  if (e instanceof BlobUrlRefused) throw new Problem(e.status, e.status === 401 ? "INVALID_URL" : "URL_NOT_FOR_THIS", e.message);
  throw e;
}

/** Moving the bytes: /api/v1/blobs/{id}?token=… — the signed URL is the only credential. */
export const blobRoutes = new Hono<HubEnv>();
blobRoutes.use("*", withBlobHeaders);

const blobQuery = z.object({ token: z.string().meta({ description: "The signed token of the URL the hub handed out" }) });

blobRoutes.put(
  "/:id",
  documented({
    id: "uploadDatarefBytes",
    tag: "DataRefs",
    summary: "Upload DataRef bytes",
    description:
      "Upload a DataRef's bytes to its signed upload URL.\n\n" +
      "The request body is the raw bytes (any content type; the DataRef's own `content_type` is what downloads get), exactly the declared `size`, " +
      "streamed to R2. Once only: the first upload to start claims the DataRef, any other is 409 `DATAREF_IMMUTABLE`. " +
      "422 `SIZE_MISMATCH` when the bytes are not the declared size, 422 `SHA256_MISMATCH` when they do not hash to the declared `sha256`; " +
      "after either the DataRef is pending again and the same URL may be used again while it lasts. " +
      "401 `INVALID_URL` for an expired or tampered token, 403 `URL_NOT_FOR_THIS` for a token of another object or method.",
    caller: "signed-url",
    query: blobQuery,
    headers: { "Content-Length": "When sent, must equal the declared size (else 422 at once); without it the body is held to the declared size" },
    responses: { 200: datarefSchema },
  }),
  async (c) => {
    const id = c.req.param("id");
    const grant = await verifyBlobUrl(c.env, c.req.query("token"), id, "PUT").catch(refused);
    const row = await datarefOnShards(c, id);
    if (!row) throw notFound("DataRef");
    if (row.status === "complete") throw conflict("This DataRef is complete and immutable; create a new one", "DATAREF_IMMUTABLE");
    const declared = Number(c.req.header("Content-Length"));
    if (c.req.header("Content-Length") !== undefined && declared !== grant.size) {
      throw new Problem(422, "SIZE_MISMATCH", `The body is ${declared} bytes; this DataRef was declared as ${grant.size}`);
    }
    // One upload at a time: the first to claim the object wins.
    const claimed = await c.var.db
      .update(datarefs)
      .set({ status: "uploading" })
      .where(and(eq(datarefs.id, id), eq(datarefs.status, "pending")))
      .returning({ id: datarefs.id });
    if (claimed.length === 0) throw conflict("Another upload of this DataRef is in progress or done", "DATAREF_IMMUTABLE");

    const body = c.req.raw.body ?? new Blob([]).stream();
    const options: R2PutOptions = { httpMetadata: { contentType: row.contentType }, ...(row.sha256 ? { sha256: row.sha256 } : {}) };
    let sha256: string;
    try {
      if (row.sha256) {
        // Streams straight to R2, which checks the declared sha256. A body with a matching Content-Length already has a
        // known length; otherwise it is held to the declared size.
        const sized = c.req.header("Content-Length") === undefined ? new FixedLengthStream(grant.size) : null;
        const piping = sized ? body.pipeTo(sized.writable).catch(() => undefined) : Promise.resolve();
        await c.env.BLOBS.put(objectKey(row), sized ? sized.readable : body, options);
        await piping;
        sha256 = row.sha256;
      } else {
        sha256 = await putComputingSha256(c.env.BLOBS, objectKey(row), body, grant.size, options);
      }
    } catch (e) {
      await c.var.db.update(datarefs).set({ status: "pending" }).where(eq(datarefs.id, id));
      const message = String((e as Error).message ?? e);
      if (/sha-?256|checksum|digest/i.test(message)) throw new Problem(422, "SHA256_MISMATCH", "The bytes do not match the declared sha256");
      throw new Problem(422, "SIZE_MISMATCH", `The body is not the declared ${grant.size} bytes`);
    }
    const [done] = await c.var.db.update(datarefs).set({ status: "complete", sha256, completedAt: nowIso() }).where(eq(datarefs.id, id)).returning();
    return c.json(datarefView(done!));
  },
);

const BYTES_HEADERS = {
  "Content-Length": "Bytes in this answer",
  "Accept-Ranges": "`bytes`",
  ETag: "The bytes' sha256, quoted",
  "Content-Disposition":
    "`inline` for text/plain, application/json, PNG, JPEG, GIF and WebP; `attachment` for any other type. With the DataRef's filename as " +
    "`filename=\"…\"` (ASCII, anything else as `_`) and, when that differs from it, `filename*=UTF-8''…` (RFC 6266)",
  "Content-Security-Policy": `\`${BLOB_HEADERS["Content-Security-Policy"]}\`: the bytes never run in the hub's origin`,
  "X-Content-Type-Options": "`nosniff`",
};

blobRoutes.get(
  "/:id",
  documented({
    id: "downloadDatarefBytes",
    tag: "DataRefs",
    summary: "Download DataRef bytes",
    description:
      "Download a DataRef's bytes from its signed download URL.\n\n" +
      "The bytes, with the DataRef's `content_type`, as a download unless that type is only shown (text, JSON, raster images): " +
      "they are what someone uploaded, and never run in the hub's origin (a `sandbox` CSP and `nosniff` on every answer here). One `Range: bytes=a-b` (or `a-`, `-n`) gets 206 with that part; " +
      "a range outside the object is 416 `RANGE_NOT_SATISFIABLE` with `Content-Range: bytes */<size>`; several ranges or another unit get the whole object. " +
      "409 `DATAREF_PENDING` while the bytes are not in. 401 `INVALID_URL` / 403 `URL_NOT_FOR_THIS` as for the upload.",
    caller: "signed-url",
    query: blobQuery,
    headers: { Range: "One byte range, `bytes=<first>-<last>`, `bytes=<first>-` or `bytes=-<suffix length>`" },
    responses: {
      200: { description: "The whole object, with the DataRef's `content_type`", contentType: "*/*", headers: BYTES_HEADERS },
      206: {
        description: "The range asked for",
        contentType: "*/*",
        headers: { ...BYTES_HEADERS, "Content-Range": "`bytes <first>-<last>/<size>`" },
      },
    },
  }),
  async (c) => {
    const id = c.req.param("id");
    await verifyBlobUrl(c.env, c.req.query("token"), id, "GET").catch(refused);
    const row = await datarefOnShards(c, id);
    if (!row) throw notFound("DataRef");
    if (row.status !== "complete") throw conflict("This DataRef has no bytes yet", "DATAREF_PENDING");
    const range = parseByteRange(c.req.header("Range") ?? null, row.size);
    if (range === "unsatisfiable") {
      throw new Problem(416, "RANGE_NOT_SATISFIABLE", `The object is ${row.size} bytes`, undefined, { "Content-Range": `bytes */${row.size}` });
    }
    const object = await c.env.BLOBS.get(objectKey(row), range ? { range } : {});
    if (!object) throw notFound("DataRef bytes");
    const type = servedContentType(row.contentType);
    const headers: Record<string, string> = {
      "Content-Type": type,
      "Accept-Ranges": "bytes",
      ETag: `"${row.sha256}"`,
      "Content-Length": String(range ? range.length : row.size),
      "Content-Disposition": contentDisposition(type, row.filename),
      ...(range ? { "Content-Range": `bytes ${range.offset}-${range.offset + range.length - 1}/${row.size}` } : {}),
    };
    return new Response(object.body, { status: range ? 206 : 200, headers });
  },
);
