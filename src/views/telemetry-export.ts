/** A project's telemetry export as admins see it (API.md "Usage, budgets and telemetry"): never its headers' values. */
import { z } from "zod";
import type { TelemetryExportRow } from "../db/schema";
import { id, timestamp } from "./fields";

export const telemetryExportSchema = z
  .object({
    project_id: id,
    endpoint: z.string().meta({ format: "uri", description: "The collector's OTLP/HTTP endpoint, as saved" }),
    traces_url: z.string().meta({ format: "uri", description: "Where spans are posted: `<endpoint>/v1/traces`, or the endpoint when it names that path" }),
    header_names: z.array(z.string()).meta({ description: "The names of the headers sent with each export; their values are kept sealed and never shown" }),
    include_content: z
      .boolean()
      .meta({ description: "Whether spans carry the task's spec, its result's summary, a failure's message and a cancellation's reason" }),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: "Why the hub stopped exporting (a span failed for about a day); saving the export again clears it" }),
    pending: z.int().min(0).meta({ description: "Spans waiting to be sent" }),
    last_error: z.string().nullable().meta({ description: "What went wrong with the last span that was not sent, if any did" }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "TelemetryExport" });

export type TelemetryExportView = z.infer<typeof telemetryExportSchema>;

export const telemetryExportView = (
  row: TelemetryExportRow,
  extra: { tracesUrl: string; headerNames: string[]; pending: number; lastError: string | null },
): TelemetryExportView => ({
  project_id: row.projectId,
  endpoint: row.endpoint,
  traces_url: extra.tracesUrl,
  header_names: extra.headerNames,
  include_content: row.includeContent,
  enabled: row.disabledReason === null,
  disabled_reason: row.disabledReason,
  pending: extra.pending,
  last_error: extra.lastError,
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});
