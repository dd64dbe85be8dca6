/** What a task's place in its project's code-review loop says on a board card or a list row, if anything worth a mark. */
import type { Task } from "./types";

export type ReviewStatus = NonNullable<Task["review"]>["status"];

export interface ReviewMark {
  kind: "in-review" | "review-failing";
  /** A word or two on the mark. */
  text: string;
  /** What the mark means, read out and shown on hover. */
  title: string;
}

/** A mark while the loop holds the task open (under review, or a fix asked of its worker) and when it failed for good; none once accepted. */
export function reviewMarkOf(review: Task["review"]): ReviewMark | null {
  if (!review) return null;
  const n = review.attempt;
  switch (review.status) {
    case "reviewing":
      return { kind: "in-review", text: "in review", title: `Code review: attempt ${n} is being reviewed` };
    case "changes_requested":
      return { kind: "in-review", text: "changes asked", title: `Code review: attempt ${n} fell short, and its worker was asked for a fix` };
    case "failed":
      return { kind: "review-failing", text: "review failed", title: `Code review failed on its last attempt (${n})` };
    case "error":
      return { kind: "review-failing", text: "review error", title: `Code review: attempt ${n} could not be reviewed` };
    default:
      return null;
  }
}
