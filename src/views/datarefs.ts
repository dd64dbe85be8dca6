/** A DataRef as both surfaces return it (API.md "DataRefs"), and the signed URLs that move its bytes. */
import { z } from "zod";
import type { datarefs } from "../db/schema";
import { id, timestamp } from "./fields";

export type DatarefRow = typeof datarefs.$inferSelect;

export const datarefSchema = z
  .object({
    id,
    uri: z.string().meta({ description: "`dataref:<id>`: how results, contracts and specs point at it" }),
    project_id: id,
    size: z.int().min(0).meta({ description: "Bytes, as declared at creation; the upload must carry exactly this many" }),
    sha256: z
      .string()
      .nullable()
      .meta({ description: "Lowercase hex. Null while pending unless declared at creation; computed from the bytes when it was not" }),
    content_type: z.string(),
    filename: z.string().nullable(),
    status: z.enum(["pending", "complete"]).meta({ description: "`pending` until its bytes are uploaded (an upload in progress counts as pending)" }),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: "DataRef" });

export const datarefView = (d: DatarefRow): z.infer<typeof datarefSchema> => ({
  id: d.id,
  uri: `dataref:${d.id}`,
  project_id: d.projectId,
  size: d.size,
  sha256: d.sha256,
  content_type: d.contentType,
  filename: d.filename,
  status: d.status === "complete" ? "complete" : "pending",
  created_at: d.createdAt,
  completed_at: d.completedAt,
});

export const signedUrlSchema = z
  .object({
    url: z.string().meta({ format: "uri", description: "`/api/v1/blobs/{id}?token=…`: the only credential needed, for this one object and method" }),
    expires_at: timestamp,
  })
  .meta({ id: "SignedUrl" });

export const newDatarefSchema = z.object({
  dataref: datarefSchema,
  upload: signedUrlSchema.extend({ method: z.literal("PUT") }).meta({ description: "Where to PUT the bytes (15 minutes)" }),
});

export const datarefWithDownloadSchema = datarefSchema
  .extend({ download: signedUrlSchema.optional().meta({ description: "Where to GET the bytes (10 minutes); only once the DataRef is complete" }) })
  .meta({ id: "DataRefWithDownload" });
