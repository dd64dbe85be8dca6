/**
 * A task's code review on its page: where the loop stands, then each attempt (its verdict, score, summary, findings
 * worst first, the change it judged and who judged it). A review task links to the task whose change it reviews.
 * Read again whenever the task's events or its review tasks move.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { linkProps } from "../router";
import type { CodeReview, Task } from "../types";
import { Problem } from "./controls";
import { Section } from "./task-sections";
import { When } from "./when";

const LOOP_WORDS: Record<NonNullable<Task["review"]>["status"], string> = {
  reviewing: "being reviewed",
  changes_requested: "changes requested of its worker",
  passed: "passed",
  warned: "accepted with warnings",
  failed: "failed on its last attempt",
  error: "could not be reviewed",
};

const taskLink = (projectId: string, id: string) => linkProps(`/projects/${projectId}/tasks/${id}`);

/** The review task's link back to the task it reviews. */
export function ReviewOf({ task, tasks }: { task: Task; tasks: Map<string, Task> }) {
  if (!task.review_of) return null;
  const reviewed = tasks.get(task.review_of);
  return (
    <Section title="Code review">
      <p class="review-of">
        Reviews the change of <a {...taskLink(task.project_id, task.review_of)}>{reviewed?.title ?? `task ${task.review_of.slice(0, 8)}`}</a>.
      </p>
    </Section>
  );
}

/** `version` changes whenever something that may change the reviews happened (an event of the task, a review task moving). */
export function TaskReviews({ task, tasks, version }: { task: Task; tasks: Map<string, Task>; version: string }) {
  const [reviews, setReviews] = useState<CodeReview[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!task.review) return;
    let live = true;
    void ok(hub.GET("/api/v1/tasks/{id}/reviews", { params: { path: { id: task.id } } })).then(
      (r) => live && (setReviews(r.reviews), setError(null)),
      (e) => live && setError(messageOf(e)),
    );
    return () => void (live = false);
  }, [task.id, task.review?.status, task.review?.attempt, version]);
  if (!task.review) return null;
  return (
    <Section title="Code review">
      <p class="review-loop" data-review-status={task.review.status}>
        Attempt {task.review.attempt}: <strong>{LOOP_WORDS[task.review.status]}</strong>.
      </p>
      <Problem message={error} />
      <ol class="review-attempts">
        {[...(reviews ?? [])].reverse().map((r) => (
          <Attempt key={r.id} review={r} projectId={task.project_id} tasks={tasks} />
        ))}
      </ol>
    </Section>
  );
}

function Attempt({ review: r, projectId, tasks }: { review: CodeReview; projectId: string; tasks: Map<string, Task> }) {
  const d = r.git_diff_stats;
  return (
    <li class={`review-attempt review-${r.status}`} data-attempt={r.attempt_number}>
      <p class="review-head">
        <strong>Attempt {r.attempt_number}</strong> <span class={`badge review-status review-${r.status}`}>{r.status}</span>
        {r.score !== null && (
          <span class="review-score" title={`Score ${r.score} of 100`}>
            {r.score}/100
          </span>
        )}
        <span class="muted small">
          asked <When iso={r.requested_at} />
          {r.completed_at && (
            <>
              {" "}
              · reviewed <When iso={r.completed_at} />
            </>
          )}
        </span>
      </p>
      {r.summary && <p class="review-summary">{r.summary}</p>}
      {r.error && <p class="problem">{r.error}</p>}
      {r.findings.length > 0 && (
        <ul class="findings">
          {r.findings.map((f, i) => (
            <li key={i} class={`finding finding-${f.severity}`}>
              <span class={`badge severity-${f.severity}`}>{f.severity}</span> <strong>{f.title}</strong>
              {f.path && (
                <>
                  {" "}
                  <code class="finding-where">
                    {f.path}
                    {f.line !== undefined && `:${f.line}`}
                  </code>
                </>
              )}
              {f.detail && <p class="finding-detail">{f.detail}</p>}
            </li>
          ))}
        </ul>
      )}
      <p class="muted small review-facts">
        {d && (
          <span class="review-diff">
            {d.files_changed} {d.files_changed === 1 ? "file" : "files"}, <span class="ins">+{d.insertions}</span> <span class="del">−{d.deletions}</span>
            {d.head_commit && (
              <>
                {" "}
                at <code>{d.head_commit.slice(0, 12)}</code>
              </>
            )}
          </span>
        )}
        <Reviewer review={r} projectId={projectId} tasks={tasks} />
      </p>
    </li>
  );
}

function Reviewer({ review: r, projectId, tasks }: { review: CodeReview; projectId: string; tasks: Map<string, Task> }) {
  const taskId = r.reviewer?.task_id ?? r.review_task_id;
  if (r.reviewer?.kind === "model") return <span> · reviewed by the model {r.reviewer.model ? <code>{r.reviewer.model}</code> : "endpoint"}</span>;
  if (!taskId) return <span> · waiting for a reviewer</span>;
  const server = tasks.get(taskId)?.assigned_server_name;
  return (
    <span>
      {" "}
      · reviewed by an agent{server && <> on {server}</>}: <a {...taskLink(projectId, taskId)}>its review task</a>
    </span>
  );
}
