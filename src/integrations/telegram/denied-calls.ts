/**
 * Denied tool calls told to the people who asked (`/denied <project>`): one Telegram outbox row per log post, project
 * and person, recorded in the same batch as the post's entries, so the notice costs the post one statement per
 * project with denied entries and nothing otherwise. The row carries its summary as its payload (no event stands for
 * it); the chat's lane sends it like any other, and drops it if the person muted the chat or lost the project since.
 */
import type { LogRow } from "../../db/permission-log";
import { cutText } from "../../domain/text";

/** Calls a notice describes; the rest are only counted. */
export const DENIED_LISTED = 3;
/** Longest tool input quoted per call (its JSON). */
const MAX_INPUT = 300;

export const DENIED_EVENT = "permissions_denied";

export interface DeniedCall {
  tool_name: string;
  tool_input: string;
  session_id: string | null;
  task_id: string | null;
  matched_rule_id: string | null;
  reason: string | null;
}

/** What a notice says of one project's denied calls in a post. */
export interface DeniedSummary {
  count: number;
  calls: DeniedCall[];
}

/** The denied entries of a post's rows, by project (pure). */
export function deniedByProject(rows: readonly LogRow[]): Map<string, DeniedSummary> {
  const byProject = new Map<string, DeniedSummary>();
  for (const [, projectId, sessionId, taskId, toolName, toolInput, , decision, ruleId, reason] of rows) {
    if (decision !== "denied") continue;
    let summary = byProject.get(projectId);
    if (!summary) byProject.set(projectId, (summary = { count: 0, calls: [] }));
    summary.count++;
    if (summary.calls.length < DENIED_LISTED)
      summary.calls.push({
        tool_name: cutText(toolName, 100, "…"),
        tool_input: cutText(toolInput, MAX_INPUT, "…"),
        session_id: sessionId,
        task_id: taskId,
        matched_rule_id: ruleId,
        reason: reason === null ? null : cutText(reason, MAX_INPUT, "…"),
      });
  }
  return byProject;
}

/** The links of the people who hear of a project's denied calls: asked for, not muted, active, still seeing it (`?1` the project). */
const HEARING = `SELECT l.id FROM telegram_links l JOIN users u ON u.id = l.user_id
     WHERE l.muted = 0
       AND EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(l.denied_projects) THEN l.denied_projects ELSE '[]' END) d WHERE d.value = ?1)
       AND u.deactivated_at IS NULL
       AND (u.role = 'admin' OR EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = ?1 AND m.user_id = u.id))`;

/**
 * Who hears of each project's denied calls in these rows, read in the directory (where links and people live) for a
 * project on another shard: its links' ids as a JSON list. Projects without denied calls are not asked of.
 */
export async function deniedRecipients(directory: D1Database, rows: readonly LogRow[]): Promise<Map<string, string>> {
  const projects = [...deniedByProject(rows).keys()];
  const lists = await Promise.all(
    projects.map(async (projectId) => {
      const row = await directory.prepare(`SELECT json_group_array(id) AS ids FROM (${HEARING})`).bind(projectId).first<{ ids: string }>();
      return [projectId, row?.ids ?? "[]"] as const;
    }),
  );
  return new Map(lists.filter(([, ids]) => ids !== "[]"));
}

/**
 * The statements recording a notice for each person who asked to hear of a project's denied calls, is not muted and
 * still sees the project; each returns the chats it recorded one for (`outbox_kind`, `outbox_target`). On the directory
 * the people are found in the statement; on another shard `recipients` names them (deniedRecipients), and a project
 * nobody hears of costs nothing.
 */
export function deniedNotices(d1: D1Database, rows: readonly LogRow[], now: string, recipients?: Map<string, string>): D1PreparedStatement[] {
  const insert = d1.prepare(
    `INSERT INTO outbox (id, target_kind, target_id, project_id, seq, event_type, payload, status, attempts, next_attempt_at, created_at)
     SELECT 'msg_' || lower(hex(randomblob(16))), 'telegram', r.id, ?1, NULL, '${DENIED_EVENT}', ?2, 'pending', 0, ?3, ?3
     FROM (${recipients ? "SELECT value AS id FROM json_each(?4)" : HEARING}) r
     RETURNING target_kind AS outbox_kind, target_id AS outbox_target`,
  );
  return [...deniedByProject(rows)].flatMap(([projectId, summary]) => {
    if (!recipients) return [insert.bind(projectId, JSON.stringify(summary), now)];
    const ids = recipients.get(projectId);
    return ids ? [insert.bind(projectId, JSON.stringify(summary), now, ids)] : [];
  });
}
