/**
 * What room operations read before they plan: a task with what blocks it, a
 * task with what depends on it, and the state of auto-assignment.
 *
 * `d1Reads` reads straight from D1 for one operation. `GroupReads`
 * (group-reads.ts) reads once for a group of operations that the room plans
 * one after another and commits in one batch: each operation then sees the
 * effects of those planned before it (the `PlanEffects` they record), exactly
 * as if they had been committed. Both read with the SQL of dependency-reads.ts
 * (a task's dependencies) and waiting-reads.ts (the waiting tasks).
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { candidatesJson, parseCandidates } from "../db/server-candidates";
import { tasks } from "../db/schema";
import type { Assignable, Assignment, DownstreamLink } from "../domain/cascade";
import type { Candidate } from "../domain/matching";
import { blockersJson, countLinks, downstreamJson, openQuestions } from "./dependency-reads";
import type { TaskRow } from "./statements";
import type { Blocker, LinkRead, TaskMemory } from "./task-memory";
import { parseWaiting, waitingAlone } from "./waiting-reads";

export type { Blocker } from "./task-memory";

export interface AssignmentContext {
  waiting: Assignable[];
  candidates: Candidate[];
}

/** A task with the unresolved dependencies of other tasks on it, and whether it has questions still open. */
export interface TaskWithDownstream {
  task: TaskRow;
  links: DownstreamLink[];
  openQuestions: boolean;
}

export interface TaskReads {
  /** The task's row alone. */
  row(taskId: string): Promise<TaskRow | undefined>;
  /** The task and its unresolved blocks/input dependencies. */
  taskWithBlockers(taskId: string): Promise<{ task: TaskRow; blockers: Blocker[] } | undefined>;
  /** The task and the unresolved dependencies of other tasks on it, with what decides their unblocking. */
  taskWithDownstream(taskId: string): Promise<TaskWithDownstream | undefined>;
  /**
   * Pending, unblocked tasks with requirements (most urgent and oldest first,
   * at most `limit`) and the servers serving the project with their load.
   * `alsoUnblocking` are tasks the operation itself unblocks.
   */
  assignmentContext(limit: number, alsoUnblocking?: readonly string[]): Promise<AssignmentContext>;
}

/** What an operation changes that a later operation of the same group must see. */
export interface PlanEffects {
  task?: { before: TaskRow; after: TaskRow };
  /** The task completed: every dependency on it is resolved. */
  resolved?: string;
  unblocked?: readonly string[];
  assignments?: readonly Assignment[];
  /** The task has a question open now. */
  asked?: string;
}

/** The task's row, if it is this project's. */
export async function taskRow(db: Db, projectId: string, taskId: string): Promise<TaskRow | undefined> {
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)));
  return row;
}

/** Reads for one operation, straight from D1: one query each; a row alone is taken from the memory when it holds it, and left there. */
export function d1Reads(db: Db, projectId: string, memory: TaskMemory): TaskReads {
  const withExtra = async (taskId: string, extra: SQL<string>, questions: SQL<number> = sql`0`) => {
    const [row] = await db
      .select({ task: tasks, extra, questions })
      .from(tasks)
      .where(and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)));
    return row;
  };
  return {
    async row(taskId) {
      const held = memory.tasks.get(taskId);
      if (held) return held;
      const row = await taskRow(db, projectId, taskId);
      if (row) memory.remember(row);
      return row;
    },
    async taskWithBlockers(taskId) {
      const row = await withExtra(taskId, blockersJson);
      return row && { task: row.task, blockers: JSON.parse(row.extra) as Blocker[] };
    },
    async taskWithDownstream(taskId) {
      const row = await withExtra(taskId, downstreamJson(sql`''`), openQuestions);
      return row && { task: row.task, links: countLinks(JSON.parse(row.extra) as LinkRead[]), openQuestions: Boolean(row.questions) };
    },
    async assignmentContext(limit, alsoUnblocking = []) {
      const [row] = await db.all<{ waiting: string; candidates: string }>(
        sql`SELECT ${waitingAlone(projectId, limit, alsoUnblocking)} AS waiting, ${candidatesJson(projectId)} AS candidates`,
      );
      return { waiting: parseWaiting(row!.waiting), candidates: parseCandidates(row!.candidates) };
    },
  };
}
