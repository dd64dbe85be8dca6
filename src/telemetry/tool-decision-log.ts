/**
 * The tool decisions of an export into the permission log of each session's project, through the project's log writer
 * (the only place its entries are inserted), which keeps each only while its session has no hook entry. An entry is
 * filed under the task its session is working on when it arrives, as the hook's are. A decision with no session the
 * caller may report for is counted as rejected, like usage; one a writer could not keep just now is counted too (its
 * id is the event's, so sending the export again writes it once).
 */
import type { Principal } from "../auth/principal";
import { sha256Hex } from "../auth/secrets";
import { countedStub } from "../db/round-trips";
import { currentTasks, type LogRow } from "../db/permission-log";
import { keptToolInput } from "../domain/tool-input";
import type { HubContext } from "../http/context";
import { logWriterStub } from "../permission-log/writer";
import { logError } from "../runtime/log";
import { sessionsOf } from "./attribution";
import { onEveryShard } from "../db/shards";
import type { ToolDecisionItem } from "./tool-decisions";

/** The agent name the hook writes for Claude Code. */
const CLAUDE = "claude";

/** A UUID-shaped id derived from the event, so the entry a resent export makes is the same entry. */
async function entryId(identity: string): Promise<string> {
  const h = await sha256Hex(identity);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface Logged {
  /** Decisions not kept: no session for them, or their writer failed. */
  rejected: number;
  reason: string | null;
}

export async function logToolDecisions(c: HubContext, principal: Principal, items: ToolDecisionItem[], receivedAt: string): Promise<Logged> {
  const out: Logged = { rejected: 0, reason: null };
  if (items.length === 0) return out;
  const sessionOf = await sessionsOf(c.env, principal, items, receivedAt);
  const placed = items.map((item) => ({ item, found: sessionOf(item) }));
  const sessionIds = [...new Set(placed.flatMap(({ found }) => ("session" in found ? [found.session.id] : [])))];
  // Each session's current task, on the shard its project lives on.
  const tasks = new Map((await onEveryShard(c.env, async (d1) => [...(await currentTasks(d1, sessionIds))])).flat());
  const byProject = new Map<string, LogRow[]>();
  for (const { item, found } of placed) {
    if ("reason" in found) {
      out.rejected++;
      out.reason ??= found.reason;
      continue;
    }
    const { session } = found;
    const input = keptToolInput(item.toolInput);
    const row: LogRow = [
      await entryId(item.identity),
      session.project_id,
      session.id,
      tasks.get(session.id) ?? null,
      item.toolName,
      input.json,
      input.truncated ? 1 : 0,
      item.decision,
      null,
      item.how,
      CLAUDE,
      item.at < receivedAt ? item.at : receivedAt,
      session.server_id,
      receivedAt,
    ];
    byProject.set(session.project_id, [...(byProject.get(session.project_id) ?? []), row]);
  }
  const lost = await Promise.all(
    [...byProject].map(async ([projectId, rows]) => {
      try {
        await countedStub(logWriterStub(c.env, projectId)).writeTelemetry(rows);
        return 0;
      } catch (e) {
        logError("a project's log writer did not take telemetry tool decisions", { request_id: c.var.requestId, project_id: projectId }, e);
        return rows.length;
      }
    }),
  );
  const unkept = lost.reduce((a, b) => a + b, 0);
  if (unkept > 0) {
    out.rejected += unkept;
    out.reason ??= "part of the tool decisions could not be logged just now";
  }
  return out;
}
