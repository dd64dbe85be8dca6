/**
 * What a linked person does from chat (Telegram, Slack), done as that person:
 * the same room operations and the same role checks as the API (a viewer's
 * approve is refused, and said so), only on projects they can see.
 */
import { accessOf } from "../auth/access";
import type { ProjectRole } from "../auth/roles";
import type { UserRow } from "../db/client";
import type { WorkerEnv } from "../runtime/worker-env";
import type { RoomCommand } from "../room/commands";
import { executeInRoom } from "../runtime/room-rpc";
import { rowsOnEveryShard } from "./chat/shard-rows";

/** What a person may do in a project, by the API's rules (their role there, nothing once their account is deactivated). */
export async function accessTo(env: WorkerEnv, user: UserRow, projectId: string) {
  if (user.deactivatedAt) return "none";
  const member =
    user.role === "admin"
      ? null
      : await env.DB.prepare("SELECT role FROM project_members WHERE project_id = ?1 AND user_id = ?2").bind(projectId, user.id).first<{ role: ProjectRole }>();
  return accessOf({ kind: "user", user }, projectId, member?.role ?? null);
}

/** The projects a person can see, by name. */
export async function visibleProjects(env: WorkerEnv, user: UserRow): Promise<{ id: string; name: string; slug: string }[]> {
  const { results } =
    user.role === "admin"
      ? await env.DB.prepare("SELECT id, name, slug FROM projects ORDER BY name").all<{ id: string; name: string; slug: string }>()
      : await env.DB.prepare("SELECT p.id, p.name, p.slug FROM projects p JOIN project_members m ON m.project_id = p.id WHERE m.user_id = ?1 ORDER BY p.name")
          .bind(user.id)
          .all<{ id: string; name: string; slug: string }>();
  return results;
}

/** How many rows an id prefix is matched against, at most. */
const PREFIX_MATCHES = 20;

/** A task or intervention the person can see, by the first characters of its id. */
export async function findVisible(
  env: WorkerEnv,
  user: UserRow,
  table: "tasks" | "interventions",
  prefix: string,
): Promise<{ id: string; projectId: string } | null> {
  if (!/^[0-9a-f-]{4,36}$/.test(prefix)) return null;
  // Each shard holds its projects' rows: the first matches of them all, in id order (a project on the move counted once).
  const found = await rowsOnEveryShard<{ id: string; project_id: string }>(
    env,
    // A range of the key finds the prefix by the primary key's index; LIKE alone reads every row.
    `SELECT id, project_id FROM ${table} WHERE id >= ?1 AND id < ?1 || '~' AND id LIKE ?1 || '%' ORDER BY id LIMIT ${PREFIX_MATCHES}`,
    prefix,
  );
  const results = [...new Map(found.map((r) => [r.id, r])).values()].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, PREFIX_MATCHES);
  for (const r of results) if ((await accessTo(env, user, r.project_id)) !== "none") return { id: r.id, projectId: r.project_id };
  return null;
}

/** Runs a room operation as the person, if they may change the project; answers what to tell them. */
export async function actAs(env: WorkerEnv, user: UserRow, projectId: string, command: RoomCommand, done: string): Promise<{ ok: boolean; text: string }> {
  const access = await accessTo(env, user, projectId);
  if (access === "none") return { ok: false, text: "Not found" };
  if (access === "read") return { ok: false, text: "Viewers can only read this project" };
  const result = await executeInRoom(env, projectId, { kind: "person", userId: user.id, label: user.email }, command);
  return result.ok ? { ok: true, text: done } : { ok: false, text: result.problem.detail };
}

/** What a button on a task does as the person, and what they are told once it is done. */
export const TASK_BUTTON_COMMANDS: Record<"approve_task" | "approve_plan" | "retry", (taskId: string) => { command: RoomCommand; done: string }> = {
  approve_task: (taskId) => ({ command: { op: "approve", taskId }, done: "Task approved" }),
  approve_plan: (taskId) => ({ command: { op: "approve_plan", taskId }, done: "Plan approved" }),
  retry: (taskId) => ({ command: { op: "retry", taskId }, done: "Retried" }),
};
