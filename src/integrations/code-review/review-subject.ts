/**
 * What a model reviewer reads for an attempt: the attempt and its task, the project's policy and sealed key, and the
 * change itself, fetched as `git diff` through the worker's session, the way `orchestratia remote exec` runs a
 * command there (the project's `remote_exec` setting must be on; each read is a `remote_exec` event in its log).
 */
import { diffRange, type ReviewPolicy } from "../../domain/code-review";
import { projectSettingsOf } from "../../domain/project-settings";
import { fromDirectory, shellQuote } from "../../domain/shell-words";
import type { GitDiffStats } from "../../protocol/hub-api";
import type { RoomEnv } from "../../runtime/room-env";
import { executeInRoom, HUB_ACTOR, type RoomReachingEnv } from "../../runtime/room-rpc";
import { linkStub } from "../../server-link/client";
import type { ReviewJob } from "./wake";

export type { ReviewJob };

export interface AttemptReads {
  stats: GitDiffStats;
  /** The commits reviewed: this completion's, or from attempt 2 on the whole change since the first attempt's base. */
  commits: { base: string; head: string };
  title: string;
  spec: string;
  acceptanceCriteria: string[];
  sessionId: string | null;
  remoteExec: boolean;
  policy: ReviewPolicy | null;
  apiKeySealed: string | null;
}

interface Row {
  status: string;
  git_diff_stats: string;
  first_stats: string | null;
  title: string;
  spec: string;
  acceptance_criteria: string;
  review_attempt: number;
  target_session_id: string | null;
  settings: string | null;
  policy: string | null;
  api_key_sealed: string | null;
}

const json = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The attempt while it still waits for its review (null once settled, superseded or gone: there is nothing to do). */
export async function readAttempt(db: D1Database, job: ReviewJob): Promise<AttemptReads | null> {
  const row = await db
    .prepare(
      `SELECT r.status, r.git_diff_stats, t.title,
              (SELECT f.git_diff_stats FROM code_reviews f WHERE f.task_id = r.task_id AND f.attempt = 1) AS first_stats, t.spec, t.acceptance_criteria, t.review_attempt, t.target_session_id,
              p.settings, rp.policy, rp.api_key_sealed
       FROM code_reviews r JOIN tasks t ON t.id = r.task_id JOIN projects p ON p.id = r.project_id
       LEFT JOIN review_policies rp ON rp.project_id = r.project_id
       WHERE r.project_id = ?1 AND r.task_id = ?2 AND r.attempt = ?3`,
    )
    .bind(job.projectId, job.taskId, job.attempt)
    .first<Row>();
  if (!row || row.status !== "pending" || row.review_attempt !== job.attempt) return null;
  const stats = JSON.parse(row.git_diff_stats) as GitDiffStats;
  const first = json<GitDiffStats>(row.first_stats);
  return {
    stats,
    // The CLI measures each completion's last commit: a later attempt is reviewed over the whole change.
    commits: { base: diffRange(first ?? stats).base, head: diffRange(stats).head },
    title: row.title,
    spec: row.spec,
    acceptanceCriteria: json<string[]>(row.acceptance_criteria) ?? [],
    sessionId: row.target_session_id,
    remoteExec: projectSettingsOf(json(row.settings)).remote_exec,
    policy: json<ReviewPolicy>(row.policy),
    apiKeySealed: row.api_key_sealed,
  };
}

/** The `git diff` of these commits, and the range as it is shown; a `~1` suffix stays outside the quotes. */
export function diffCommand(commits: { base: string; head: string }): { range: string; command: string } {
  const quote = (rev: string) => (rev.endsWith("~1") ? `${shellQuote(rev.slice(0, -2))}~1` : shellQuote(rev));
  return { range: `${commits.base}..${commits.head}`, command: `git diff --no-color ${quote(commits.base)}..${quote(commits.head)}` };
}

/** How long the daemon is given to run `git diff`. */
const DIFF_TIMEOUT_MS = 60_000;
/** Commands are recorded in the project's log up to this many characters (as `remote exec`'s are). */
const RECORDED_COMMAND_CHARS = 4096;

interface SessionRow {
  name: string;
  working_directory: string | null;
  server_id: string;
  server_name: string;
  os: string | null;
}

/** `transient`: the daemon was away or slow, and reading again later may work. */
export type DiffRead = { ok: true; diff: string } | { ok: false; error: string; transient?: true };

/** A commit as `git diff` may be given it: hex, with the `~1` a missing base becomes (nothing an option could hide in). */
const COMMIT = /^[0-9a-f]{4,64}(~1)?$/i;
export const commitsReadable = (commits: { base: string; head: string }) => COMMIT.test(commits.base) && COMMIT.test(commits.head);

/** The change's diff, read in the task's session on its worker's machine; why not, when it cannot be. */
export async function readDiff(env: RoomEnv & RoomReachingEnv, job: ReviewJob, reads: AttemptReads): Promise<DiffRead> {
  if (!reads.remoteExec)
    return {
      ok: false,
      error: "the project's remote_exec setting is off: a model reviewer reads the change through the worker's session (an admin turns it on)",
    };
  if (!reads.sessionId) return { ok: false, error: "the task has no session to read its change from" };
  if (!commitsReadable(reads.commits))
    return {
      ok: false,
      error: `the completion's git_diff_stats name no commits to compare (${JSON.stringify(reads.commits.base)}..${JSON.stringify(reads.commits.head)})`,
    };
  const session = await env.DB.prepare(
    `SELECT s.name, s.working_directory, s.server_id, v.name AS server_name, v.os
     FROM sessions s JOIN servers v ON v.id = s.server_id WHERE s.id = ?1 AND s.project_id = ?2`,
  )
    .bind(reads.sessionId, job.projectId)
    .first<SessionRow>();
  if (!session) return { ok: false, error: "the task's session is gone" };
  const { range, command } = diffCommand(reads.commits);
  // As `remote exec` does: from the session's folder, except on Windows (cmd.exe) or when the hub does not know it.
  const folder = session.working_directory && !/^win/i.test(session.os ?? "") ? session.working_directory : null;
  const outcome = await linkStub(env, session.server_id).remoteExec({
    requestId: crypto.randomUUID(),
    command: folder ? fromDirectory(folder, command) : command,
    sessionId: reads.sessionId,
    timeoutMs: DIFF_TIMEOUT_MS,
  });
  const offline = `the daemon of server "${session.server_name}" is not connected: the change could not be read`;
  if (outcome.kind === "offline") return { ok: false, error: offline, transient: true };
  const recorded = await executeInRoom(env, job.projectId, HUB_ACTOR, {
    op: "remote_use",
    event: "remote_exec",
    data: {
      session_id: reads.sessionId,
      session_name: session.name,
      server_name: session.server_name,
      command: command.slice(0, RECORDED_COMMAND_CHARS),
      ...(folder ? { working_directory: folder } : {}),
      exit_code: outcome.kind === "answered" ? outcome.exit_code : null,
      ...(outcome.kind === "answered" ? {} : { outcome: outcome.kind === "timed_out" ? "timed out" : "the daemon disconnected" }),
      code_review: { task_id: job.taskId, attempt: job.attempt, range },
    },
  });
  if (!recorded.ok) return { ok: false, error: `the read of the change could not be recorded: ${recorded.problem.detail}` };
  if (outcome.kind === "gone")
    return { ok: false, error: `the daemon of server "${session.server_name}" disconnected before the change was read`, transient: true };
  if (outcome.kind === "timed_out") return { ok: false, error: `git diff did not answer within ${DIFF_TIMEOUT_MS / 1000} s`, transient: true };
  if (outcome.exit_code !== 0)
    return { ok: false, error: `git diff ${range} failed (exit code ${outcome.exit_code}): ${outcome.stderr.trim().slice(0, 300) || "no output"}` };
  return { ok: true, diff: outcome.stdout };
}
