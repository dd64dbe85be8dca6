/** A project's code health as the hub answers it: to the CLI (`orchestratia code health|debt|priorities`) and to people. */
import { z } from "zod";
import type { CodeHealthRow } from "../db/schema";
import type { SummaryDetails } from "../domain/code-health";
import { id, timestamp } from "./fields";

export const snapshotStoredSchema = z
  .object({ health_score: z.int().meta({ description: "0 to 100" }), health_grade: z.string().meta({ description: "A+ to F" }) })
  .meta({ id: "CodeHealthStored" });

export const codeHealthSchema = z
  .object({
    id,
    session_id: id.nullable().meta({ description: "The session whose working directory was scanned; null for `orchestratia code scan`" }),
    health_score: z.int(),
    health_grade: z.string(),
    total_files: z.int(),
    analyzed_files: z.int(),
    total_lines: z.int(),
    languages: z.record(z.string(), z.int()),
    factors: z
      .record(z.string(), z.object({ score: z.number(), details: z.string() }))
      .meta({ description: "complexity, dependencies, churn and structure, each scored 0 to 100" }),
    tech_debt_total_hours: z.number(),
    tech_debt_top_files: z
      .array(z.object({ path: z.string(), hours: z.number(), reasons: z.array(z.string()) }))
      .meta({ description: "The files owing the most, most first (at most 10)" }),
    hotspots: z.array(z.string()).meta({ description: "The files scoring worst on complexity, size and churn together (at most 10)" }),
    git_commit: z.string().nullable(),
    git_branch: z.string().nullable(),
    triggered_by: z.string().nullable().meta({ description: "`on_demand` (Scan now), `session_closed`, or null for the CLI" }),
    mermaid_graph: z.string().nullable().meta({ description: "The module graph as Mermaid flowchart text" }),
    snapshot_dataref_id: id.meta({ description: "The whole snapshot (files, modules, dependencies), a JSON DataRef of the project" }),
    scanned_at: timestamp,
    received_at: timestamp,
  })
  .meta({ id: "CodeHealth" });

export const noDataSchema = z.object({ status: z.literal("no_data") }).meta({ id: "CodeHealthNoData" });
export const noReviewSchema = z.object({ status: z.literal("no_review") }).meta({ id: "CodeReviewNone" });

export const codeHealthPointSchema = z
  .object({ id, health_score: z.int(), health_grade: z.string(), tech_debt_total_hours: z.number(), scanned_at: timestamp, received_at: timestamp })
  .meta({ id: "CodeHealthPoint" });

export const projectCodeHealthSchema = z
  .object({
    latest: codeHealthSchema.nullable().meta({ description: "The newest snapshot's summary; null before the first scan" }),
    history: z.array(codeHealthPointSchema).meta({ description: "Each snapshot's score, oldest first (the last 200)" }),
  })
  .meta({ id: "ProjectCodeHealth" });

export const codeHealthView = (row: CodeHealthRow): z.infer<typeof codeHealthSchema> => {
  const d = JSON.parse(row.summary) as SummaryDetails;
  return {
    id: row.id,
    session_id: row.sessionId,
    health_score: row.healthScore,
    health_grade: row.healthGrade,
    total_files: d.total_files,
    analyzed_files: d.analyzed_files,
    total_lines: d.total_lines,
    languages: d.languages,
    factors: d.factors,
    tech_debt_total_hours: row.techDebtHours,
    tech_debt_top_files: d.tech_debt_top_files,
    hotspots: d.hotspots,
    git_commit: d.git_commit,
    git_branch: d.git_branch,
    triggered_by: d.triggered_by,
    mermaid_graph: d.mermaid_graph,
    snapshot_dataref_id: row.datarefId,
    scanned_at: row.scannedAt,
    received_at: row.receivedAt,
  };
};

export const codeHealthPointView = (row: Pick<CodeHealthRow, "id" | "healthScore" | "healthGrade" | "techDebtHours" | "scannedAt" | "receivedAt">) => ({
  id: row.id,
  health_score: row.healthScore,
  health_grade: row.healthGrade,
  tech_debt_total_hours: row.techDebtHours,
  scanned_at: row.scannedAt,
  received_at: row.receivedAt,
});
