/**
 * Review steps a lost follow-up left undone (review-followups.ts runs them after the batch that asks; the object can
 * restart in between): an agent's attempt with no review task yet, an attempt whose review task ended unsettled, a
 * model's attempt still pending. Each step is a no-op once done, so finding one twice does no harm.
 */
import type { RoomCommand } from "./commands";

/** How long an attempt waits for its step before the hourly sweep makes it again. */
export const STRANDED_MS = 10 * 60_000;

const STRANDED = `
  SELECT r.project_id, r.task_id, r.attempt, r.reviewer_kind, r.review_task_id FROM code_reviews r
  LEFT JOIN tasks rt ON rt.id = r.review_task_id
  WHERE r.status = 'pending' AND r.requested_at < ?1 AND (r.project_id = ?2 OR ?2 IS NULL)
    AND (r.reviewer_kind = 'model' OR r.review_task_id IS NULL OR rt.status IN ('done', 'failed', 'cancelled'))`;

interface StrandedRow {
  project_id: string;
  task_id: string;
  attempt: number;
  reviewer_kind: "agent" | "model";
  review_task_id: string | null;
}

/** The stranded attempts of one project (or of all, for the sweep to know which rooms to wake). */
export async function strandedReviews(d1: D1Database, projectId: string | null, now = Date.now()): Promise<StrandedRow[]> {
  const { results } = await d1
    .prepare(STRANDED)
    .bind(new Date(now - STRANDED_MS).toISOString(), projectId)
    .all<StrandedRow>();
  return results;
}

/** The step a stranded attempt needs: handed to its reviewer again, or settled from its ended review task. */
export const stepOf = (r: StrandedRow): RoomCommand =>
  r.reviewer_kind === "agent" && r.review_task_id
    ? { op: "settle_review", taskId: r.task_id, attempt: r.attempt, source: { kind: "agent", reviewTaskId: r.review_task_id } }
    : { op: "start_review", taskId: r.task_id, attempt: r.attempt };
