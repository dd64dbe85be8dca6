/** What the hub keeps of a code health snapshot in D1: what `orchestratia code health|debt|priorities` print, and the dashboard draws. */
import type { Snapshot } from "../protocol/code-health";

/** `code health` lists these; `code priorities` numbers them. */
export const TOP_DEBT_FILES = 10;
export const MAX_HOTSPOTS = 10;
/** The scanner draws at most 20 modules; a graph larger than this is not kept in the summary (the whole snapshot has it). */
export const MAX_MERMAID_CHARS = 32 * 1024;

/** The summary's fields beside the score, grade and debt (which have their own columns). */
export interface SummaryDetails {
  total_files: number;
  analyzed_files: number;
  total_lines: number;
  languages: Record<string, number>;
  factors: Record<string, { score: number; details: string }>;
  tech_debt_top_files: { path: string; hours: number; reasons: string[] }[];
  hotspots: string[];
  git_commit: string | null;
  git_branch: string | null;
  triggered_by: string | null;
  mermaid_graph: string | null;
}

export interface SnapshotSummary {
  healthScore: number;
  healthGrade: string;
  techDebtHours: number;
  scannedAt: string;
  details: SummaryDetails;
}

export function summaryOf(s: Snapshot): SnapshotSummary {
  const h = s.health;
  const mermaid = s.mermaid_graph ?? null;
  return {
    healthScore: Math.round(h.score),
    healthGrade: h.grade,
    techDebtHours: h.tech_debt.total_hours,
    scannedAt: new Date(s.scanned_at).toISOString(),
    details: {
      total_files: s.stats.total_files,
      analyzed_files: s.stats.analyzed_files,
      total_lines: s.stats.total_lines,
      languages: s.stats.languages,
      factors: Object.fromEntries(Object.entries(h.factors).map(([name, f]) => [name, { score: f.score, details: f.details }])),
      tech_debt_top_files: h.tech_debt.files.slice(0, TOP_DEBT_FILES).map((f) => ({ path: f.path, hours: f.hours, reasons: f.reasons })),
      hotspots: h.hotspots.slice(0, MAX_HOTSPOTS),
      git_commit: s.git_commit ?? null,
      git_branch: s.git_branch ?? null,
      triggered_by: s.triggered_by ?? null,
      mermaid_graph: mermaid !== null && mermaid.length <= MAX_MERMAID_CHARS ? mermaid : null,
    },
  };
}
