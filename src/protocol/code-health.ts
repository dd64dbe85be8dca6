/**
 * A code health snapshot as the official daemon's scanner makes it (orchestratia_agent/codebase_scanner
 * `CodebaseScanner.scan`), posted by `orchestratia code scan` or sent as hub.py's `architecture_snapshot` frame.
 * The fields the hub summarises are checked; the rest (files, modules, dependencies, ...) is kept as it came.
 */
import { z } from "zod";

/** A snapshot is read whole: the body of its post is held to this (16 MiB; real scans of 2,000 files are far smaller). */
export const MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024;

const count = z.int("must be a whole number").min(0, "must not be negative");
const hours = z.number().min(0, "must not be negative");
const short = (max: number) => z.string().max(max, `must be at most ${max} characters`);

const factorSchema = z.looseObject({ score: z.number().min(0).max(100), details: short(2000).default("") });
const debtFileSchema = z.looseObject({ path: short(4096), hours, reasons: z.array(short(500)).max(50).default([]) });

export const snapshotSchema = z.looseObject({
  scanned_at: z.iso.datetime({ offset: true, error: "must be an ISO 8601 time" }),
  git_commit: short(100).nullish(),
  git_branch: short(500).nullish(),
  triggered_by: short(50).nullish(),
  stats: z.looseObject({ total_files: count, analyzed_files: count.default(0), total_lines: count, languages: z.record(z.string(), count).default({}) }),
  health: z.looseObject({
    score: z.number().min(0, "must be from 0 to 100").max(100, "must be from 0 to 100"),
    grade: z.string().min(1, "must not be empty").max(5, "must be at most 5 characters"),
    factors: z.record(short(100), factorSchema).default({}),
    hotspots: z.array(short(4096)).default([]),
    tech_debt: z.looseObject({ total_hours: hours, files: z.array(debtFileSchema).default([]) }).default({ total_hours: 0, files: [] }),
  }),
  mermaid_graph: z.string().nullish(),
});
export type Snapshot = z.output<typeof snapshotSchema>;

export const snapshotPost = z.object({
  project_id: z.uuid("must be a UUID"),
  snapshot: snapshotSchema,
});
