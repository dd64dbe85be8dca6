/**
 * The code-review loop's decisions (API.md "Code review"): which completions a project's policy reviews, what a score
 * means under its thresholds, what follows a review, and the words the worker's agent is sent. Pure: the room applies
 * them in the batch each review causes.
 */
import { fnmatch } from "./fnmatch";
import { cutText } from "./text";

export const REVIEWER_KINDS = ["agent", "model"] as const;
export type ReviewerKind = (typeof REVIEWER_KINDS)[number];
export const MODEL_API_STYLES = ["openai", "anthropic"] as const;
export type ModelApiStyle = (typeof MODEL_API_STYLES)[number];
export const FINAL_FAILURE_ACTIONS = ["keep_done", "needs_human"] as const;
export type FinalFailureAction = (typeof FINAL_FAILURE_ACTIONS)[number];
export const FINDING_SEVERITIES = ["error", "warning", "info"] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];
export const VERDICTS = ["pass", "warn", "fail"] as const;
export type Verdict = (typeof VERDICTS)[number];

/** An attempt's state: waiting for its reviewer, judged, not reviewable (`error`), or replaced by a newer completion. */
export const ATTEMPT_STATUSES = ["pending", ...VERDICTS, "error", "superseded"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/**
 * Where a reviewed task stands in the loop (`tasks.review_status`): a review under way, a fix asked of its worker,
 * accepted (`passed`, or `warned` on its last attempt), failed for good, or not reviewable by its reviewer.
 */
export const TASK_REVIEW_STATUSES = ["reviewing", "changes_requested", "passed", "warned", "failed", "error"] as const;
export type TaskReviewStatus = (typeof TASK_REVIEW_STATUSES)[number];

/** The states in which the task's worker may complete it again, as the loop's next attempt. */
export const OPEN_TO_WORKER: readonly TaskReviewStatus[] = ["reviewing", "changes_requested"];

/** The tag (a capability) a server declares to take review tasks. */
export const DEFAULT_REVIEW_CAPABILITY = "code-review";
/** The contract key a review task's result carries its review under. */
export const REVIEW_CONTRACT = "review";
/** The type of the tasks the hub creates for agent reviewers. */
export const REVIEW_TASK_TYPE = "code_review";

export interface ReviewMatch {
  types?: string[];
  tags?: string[];
  priorities?: string[];
  /** fnmatch patterns: the change touches at least one file one of them matches. */
  paths?: string[];
  /** Lines inserted and deleted, together. */
  min_lines?: number;
}

export interface ReviewerSettings {
  kind: ReviewerKind;
  capability: string;
  endpoint: string | null;
  api_style: ModelApiStyle | null;
  model: string | null;
  /** Whether a key is kept (sealed; it is never answered back). */
  has_api_key: boolean;
}

export interface ReviewPolicy {
  enabled: boolean;
  match: ReviewMatch;
  reviewer: ReviewerSettings;
  pass_score: number;
  warn_score: number;
  max_retries: number;
  on_final_failure: FinalFailureAction;
}

export const DEFAULT_REVIEW_POLICY: ReviewPolicy = {
  enabled: false,
  match: {},
  reviewer: { kind: "agent", capability: DEFAULT_REVIEW_CAPABILITY, endpoint: null, api_style: null, model: null, has_api_key: false },
  pass_score: 80,
  warn_score: 60,
  max_retries: 2,
  on_final_failure: "keep_done",
};

export interface Finding {
  severity: FindingSeverity;
  title: string;
  detail: string;
  path?: string;
  line?: number;
}

/** A reviewer's answer, as validated. */
export interface Review {
  score: number;
  summary: string;
  findings: Finding[];
  /** What the reviewer called it; the policy's thresholds decide. */
  status?: Verdict;
}

/** What the completing agent's commit changed, as far as the policy reads it. */
export interface DiffShape {
  files_changed: number;
  insertions: number;
  deletions: number;
  files: { path: string }[];
  binary_files: string[];
}

/** The stats an attempt keeps of the change it reviews, as the completion's CLI measured them. */
export interface ReviewedDiff extends DiffShape {
  files: { path: string; insertions: number; deletions: number }[];
  head_commit: string | null;
  base_commit: string | null;
}

/** What the policy reads of the completed task. */
export interface ReviewedTask {
  type: string;
  priority: string;
  requirements: Record<string, unknown> | null;
  structuredSpec: Record<string, unknown> | null;
}

const tagsOf = (t: ReviewedTask): string[] => {
  const listed = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  return [...listed(t.requirements?.tags), ...listed(t.structuredSpec?.tags)].map((x) => x.toLowerCase());
};

/**
 * Whether the policy reviews this completion: it is on, the completion changed something (a completion the CLI
 * measured no change for has nothing to review), and the task meets every criterion the policy sets.
 */
export function policyReviews(policy: ReviewPolicy, task: ReviewedTask, diff: DiffShape | null | undefined): boolean {
  if (!policy.enabled || !diff || diff.files_changed <= 0) return false;
  const m = policy.match;
  if (m.types?.length && !m.types.some((t) => t.toLowerCase() === task.type.toLowerCase())) return false;
  if (m.priorities?.length && !m.priorities.includes(task.priority)) return false;
  if (m.tags?.length) {
    const tags = tagsOf(task);
    if (!m.tags.some((t) => tags.includes(t.toLowerCase()))) return false;
  }
  if (m.paths?.length) {
    const paths = [...diff.files.map((f) => f.path), ...diff.binary_files];
    if (!paths.some((p) => m.paths!.some((pattern) => fnmatch(p, pattern)))) return false;
  }
  if (m.min_lines !== undefined && diff.insertions + diff.deletions < m.min_lines) return false;
  return true;
}

/** What a score is under the policy's thresholds. */
export const verdictOf = (score: number, policy: Pick<ReviewPolicy, "pass_score" | "warn_score">): Verdict =>
  score >= policy.pass_score ? "pass" : score >= policy.warn_score ? "warn" : "fail";

/**
 * What follows a judged attempt (1-based): a pass is accepted; below the pass score the worker is asked for a fix
 * while attempts remain (one plus `max_retries` in all); after that a warn is accepted and a fail is final.
 */
export type NextStep = { kind: "accept"; status: "passed" | "warned" } | { kind: "fix" } | { kind: "final" };

export function nextStep(verdict: Verdict, attempt: number, policy: Pick<ReviewPolicy, "max_retries">): NextStep {
  if (verdict === "pass") return { kind: "accept", status: "passed" };
  if (attempt <= policy.max_retries) return { kind: "fix" };
  return verdict === "warn" ? { kind: "accept", status: "warned" } : { kind: "final" };
}

const SEVERITY_ORDER: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 };

/** Findings worst first, keeping the reviewer's order within a severity. */
export const bySeverity = (findings: readonly Finding[]): Finding[] =>
  findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);

const where = (f: Finding) => (f.path ? ` (${f.path}${f.line !== undefined ? `:${f.line}` : ""})` : "");

/** Most findings the fix prompt lists; the rest are counted (`orchestratia code review` shows them all). */
const PROMPT_FINDINGS = 20;

/**
 * What the worker's agent is typed after a review below the pass score: the score, the summary, the findings worst
 * first, and the command to complete again (the official CLI takes the result only as `--result`). The daemon types it
 * as keystrokes, so the caller makes it one line.
 */
export function fixPrompt(args: {
  taskId: string;
  title: string;
  attempt: number;
  maxRetries: number;
  verdict: Verdict;
  policy: ReviewPolicy;
  review: Review;
}) {
  const { taskId, attempt, maxRetries, review } = args;
  const findings = bySeverity(review.findings.filter((f) => f.severity !== "info"));
  // Each piece is kept short, so that the prompt stays well within what is typed whole (the command ends it).
  const listed = findings
    .slice(0, PROMPT_FINDINGS)
    .map((f, i) => `(${i + 1}) [${f.severity}] ${cutText(f.title, 200, "…")}${cutText(where(f), 300, "…)")}: ${cutText(f.detail, 400, "…")}`);
  const more = findings.length > PROMPT_FINDINGS ? [`and ${findings.length - PROMPT_FINDINGS} more`] : [];
  return [
    `Code review of task "${args.title}" (#${taskId.slice(0, 8)}), attempt ${attempt} of ${maxRetries + 1}:`,
    `score ${review.score}/100 (${args.verdict}; a pass needs ${args.policy.pass_score}).`,
    cutText(review.summary, 2000, "…"),
    findings.length ? `Fix these findings: ${[...listed, ...more].join(" ")}` : "Address the review's summary.",
    `Run \`orchestratia code review ${taskId}\` for the full review. When fixed, commit, then run \`orchestratia task complete ${taskId} --result "<what you fixed>"\`.`,
  ]
    .filter((s) => s.length > 0)
    .join(" ");
}

/** The commits a diff covers, as `git diff` takes them: its base (the head's parent when none was measured) to its head. */
export const diffRange = (diff: { base_commit?: string | null; head_commit?: string | null }) => {
  const head = diff.head_commit ?? "HEAD";
  return { base: diff.base_commit ?? `${head}~1`, head };
};

/**
 * The commits a later attempt is reviewed over: the whole change since the first attempt's base, and what changed
 * since the attempt reviewed last. The CLI measures each completion's last commit only, so attempt n alone would
 * show just the fix.
 */
export function laterAttemptRanges(first: ReviewedDiff, previous: ReviewedDiff | null, current: ReviewedDiff) {
  const head = diffRange(current).head;
  return { whole: { base: diffRange(first).base, head }, sinceReview: previous?.head_commit ? { base: previous.head_commit, head } : null };
}

/** The spec of the task an agent reviewer is given: what to review, and the shape its result must carry. */
export function reviewTaskSpec(args: {
  taskId: string;
  title: string;
  spec: string;
  acceptanceCriteria: readonly string[];
  repo: string | null;
  branch: string | null;
  attempt: number;
  diff: DiffShape & { base_commit?: string | null; head_commit?: string | null };
  /** For an attempt after the first: the whole change, and what changed since the last review. */
  later?: ReturnType<typeof laterAttemptRanges>;
}): string {
  const { diff, later } = args;
  const range = diffRange(diff);
  const files = diff.files.map((f) => `- ${f.path}`).join("\n");
  return [
    `Review the change made for task "${args.title}" (${args.taskId}), attempt ${args.attempt}.`,
    args.repo ? `Repository: ${args.repo}${args.branch ? ` (branch ${args.branch})` : ""}.` : "",
    "The commits are the worker's: `git fetch` first if your clone does not have them.",
    `This completion's commits: \`git diff ${range.base}..${range.head}\` — ${diff.files_changed} files, +${diff.insertions}/-${diff.deletions}.`,
    later ? `The whole change so far: \`git diff ${later.whole.base}..${later.whole.head}\`.` : "",
    later?.sinceReview ? `What changed since the last review: \`git diff ${later.sinceReview.base}..${later.sinceReview.head}\`.` : "",
    files ? `Files:\n${files}` : "",
    `The task's spec:\n${args.spec}`,
    args.acceptanceCriteria.length ? `Acceptance criteria:\n${args.acceptanceCriteria.map((c) => `- ${c}`).join("\n")}` : "",
    [
      `Complete this task with the contract \`${REVIEW_CONTRACT}\`:`,
      `orchestratia task complete <this task's id> --result '{"$schema": "orchestratia/task-result/v1", "summary": "…", "contracts": {"${REVIEW_CONTRACT}": {"status": "fulfilled", "data": {"score": 0-100, "status": "pass|warn|fail", "summary": "…", "findings": [{"severity": "error|warning|info", "title": "…", "detail": "…", "path": "…", "line": 1}]}}}}'`,
    ].join("\n"),
  ]
    .filter((s) => s.length > 0)
    .join("\n\n");
}
