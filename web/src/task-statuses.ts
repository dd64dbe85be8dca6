/** A task's statuses in the order a task moves through them, with the names people read: the board's columns, the list's groups. */
import type { TaskStatus } from "./types";

export const STATUSES: { status: TaskStatus; label: string }[] = [
  { status: "pending", label: "Pending" },
  { status: "assigned", label: "Assigned" },
  { status: "planning", label: "Planning" },
  { status: "plan_review", label: "Plan review" },
  { status: "running", label: "Running" },
  { status: "needs_human", label: "Needs a human" },
  { status: "done", label: "Done" },
  { status: "failed", label: "Failed" },
  { status: "cancelled", label: "Cancelled" },
];
