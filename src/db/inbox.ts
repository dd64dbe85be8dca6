/**
 * The inbox's reads: what waits on a person in a set of projects. Questions asked of people are pending interventions
 * (an agent's question asked of another session waits on that agent, not on people); plans to review and agents' tasks
 * to approve are the tasks in tasks_awaiting_person. Each read goes by the project's index, never by its events.
 */
import { sql } from "drizzle-orm";
import type { TaskStatus } from "../domain/lifecycle";
import type { Db } from "./client";
import { awaitingPerson, type Priority } from "./schema";

/** How many of each kind one read returns, newest first. */
export const INBOX_LIMIT = 200;

/** Pending interventions asked of people in the projects. */
const OPEN_QUESTIONS = (projects: string) => sql`
  i.project_id IN (SELECT value FROM json_each(${projects})) AND i.status = 'pending' AND i.target_session_id IS NULL`;

/** When a task began to wait on a person: an agent's task from its creation, a plan from its submission (the task's last change). */
const TASK_ASKED_AT = sql.raw("CASE WHEN t.awaiting_approval = 1 THEN t.created_at ELSE t.updated_at END");

export interface InboxQuestionRow {
  id: string;
  project_id: string;
  task_id: string | null;
  intervention_type: "help" | "question" | "approval";
  question: string;
  context: string | null;
  options: string | null;
  asked_by: string;
  expires_at: string | null;
  created_at: string;
  task_title: string | null;
  task_status: TaskStatus | null;
  task_priority: Priority | null;
  server_id: string | null;
  server_name: string | null;
  session_id: string | null;
  session_name: string | null;
}

/** The questions, with their task and who asks: the server waiting for the answer, else the task's agent and its session. */
export const openQuestionsQuery = (projectIds: string[]) => sql`
    SELECT i.id, i.project_id, i.task_id, i.intervention_type, i.question, i.context, i.options, i.asked_by, i.expires_at, i.created_at,
      t.title AS task_title, t.status AS task_status, t.priority AS task_priority,
      sv.id AS server_id, sv.name AS server_name, s.id AS session_id, s.name AS session_name
    FROM interventions i
    LEFT JOIN tasks t ON t.id = i.task_id
    LEFT JOIN sessions s ON s.id = t.target_session_id
    LEFT JOIN servers sv ON sv.id = COALESCE(i.server_id, t.assigned_server_id)
    WHERE ${OPEN_QUESTIONS(JSON.stringify(projectIds))}
    ORDER BY i.created_at DESC, i.id LIMIT ${INBOX_LIMIT}`;
export const openQuestions = (db: Db, projectIds: string[]) => db.all<InboxQuestionRow>(openQuestionsQuery(projectIds));

export interface InboxTaskRow {
  id: string;
  project_id: string;
  title: string;
  status: TaskStatus;
  priority: Priority;
  spec: string;
  plan: string | null;
  awaiting_approval: number;
  created_by: string;
  asked_at: string;
  server_id: string | null;
  server_name: string | null;
  session_id: string | null;
  session_name: string | null;
}

/**
 * Plans to review and agents' tasks to approve. Who asks: for a plan, the assignee and the session working it; for a
 * task to approve, the session that created it and its server.
 */
export const tasksAwaitingPeopleQuery = (projectIds: string[]) => sql`
    SELECT t.id, t.project_id, t.title, t.status, t.priority, t.spec, t.plan, t.awaiting_approval, t.created_by, ${TASK_ASKED_AT} AS asked_at,
      sv.id AS server_id, sv.name AS server_name, s.id AS session_id, s.name AS session_name
    FROM tasks t
    LEFT JOIN sessions s ON s.id = CASE WHEN t.awaiting_approval = 1 THEN t.source_session_id ELSE t.target_session_id END
    LEFT JOIN servers sv ON sv.id = CASE WHEN t.awaiting_approval = 1 THEN s.server_id ELSE t.assigned_server_id END
    WHERE t.project_id IN (SELECT value FROM json_each(${JSON.stringify(projectIds)})) AND ${sql.raw(awaitingPerson("t"))}
    ORDER BY asked_at DESC, t.id LIMIT ${INBOX_LIMIT}`;
export const tasksAwaitingPeople = (db: Db, projectIds: string[]) => db.all<InboxTaskRow>(tasksAwaitingPeopleQuery(projectIds));

/** How many items of the projects arrived after `seenAt` (all, without it), and when the newest did. */
export function inboxCountQuery(projectIds: string[], seenAt: string | null) {
  const projects = JSON.stringify(projectIds);
  return sql`
    WITH asked(at) AS (
      SELECT i.created_at FROM interventions i WHERE ${OPEN_QUESTIONS(projects)}
      UNION ALL
      SELECT ${TASK_ASKED_AT} FROM tasks t WHERE t.project_id IN (SELECT value FROM json_each(${projects})) AND ${sql.raw(awaitingPerson("t"))}
    )
    SELECT COUNT(CASE WHEN ${seenAt} IS NULL OR at > ${seenAt} THEN 1 END) AS unread, MAX(at) AS newest_at FROM asked`;
}

export async function inboxCount(db: Db, projectIds: string[], seenAt: string | null): Promise<{ unread: number; newest_at: string | null }> {
  if (projectIds.length === 0) return { unread: 0, newest_at: null };
  const [row] = await db.all<{ unread: number; newest_at: string | null }>(inboxCountQuery(projectIds, seenAt));
  return { unread: row?.unread ?? 0, newest_at: row?.newest_at ?? null };
}
