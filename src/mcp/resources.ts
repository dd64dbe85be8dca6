/**
 * The resources: a task (`orchestratia://tasks/{id}`), as the REST API answers it, and a project's board
 * (`orchestratia://projects/{id}/board`), its latest tasks grouped by status. Both are read with the caller's rights.
 */
import type { Hono } from "hono";
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type ResourceTemplateType, type TextResourceContents } from "@modelcontextprotocol/server";
import { TASK_STATUSES } from "../domain/lifecycle";
import type { HubContext, HubEnv } from "../http/context";
import { requestAs, type RouteAnswer } from "../http/internal-request";
import type { McpCaller } from "./dispatch";

const BOARD_TASKS = 200;

export const RESOURCE_TEMPLATES: readonly ResourceTemplateType[] = [
  {
    uriTemplate: "orchestratia://tasks/{id}",
    name: "task",
    title: "A task",
    description: "A task as the REST API answers it, with its dependencies and resolved_inputs. Subscribe to hear when it changes.",
    mimeType: "application/json",
  },
  {
    uriTemplate: "orchestratia://projects/{id}/board",
    name: "board",
    title: "A project's board",
    description: `The project's latest ${BOARD_TASKS} tasks, grouped by status. Subscribe to hear when any task of the project changes.`,
    mimeType: "application/json",
  },
];

export type ResourceRef = { kind: "task"; taskId: string; projectId?: undefined } | { kind: "board"; projectId: string; taskId: null };

/** What a resource URI names; undefined for a URI that is none of the hub's. */
export function resourceOf(uri: string): ResourceRef | undefined {
  const task = /^orchestratia:\/\/tasks\/([^/?#]+)$/.exec(uri);
  if (task) return { kind: "task", taskId: decodeURIComponent(task[1]!) };
  const board = /^orchestratia:\/\/projects\/([^/?#]+)\/board$/.exec(uri);
  if (board) return { kind: "board", projectId: decodeURIComponent(board[1]!), taskId: null };
  return undefined;
}

/**
 * A refused read as the MCP error for it: invalid params (-32602, which every revision now gives a resource that is not
 * there) naming the URI in `data`, with the problem beside it.
 */
function refused(uri: string, answer: RouteAnswer): ProtocolError {
  const problem = (answer.body ?? {}) as { code?: string; detail?: string };
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `${uri}: ${problem.detail ?? "refused"}`, { uri, ...problem });
}

interface TaskSummary {
  id: string;
  status: string;
  [field: string]: unknown;
}

/** The board: the tasks' main fields under their status, every status present. */
export function boardOf(projectId: string, tasks: TaskSummary[], more: boolean) {
  const columns = Object.fromEntries(TASK_STATUSES.map((s) => [s, [] as Record<string, unknown>[]]));
  for (const t of tasks) {
    columns[t.status]?.push({
      id: t.id,
      title: t.title,
      type: t.type,
      priority: t.priority,
      blocked: t.blocked,
      assigned_server_name: t.assigned_server_name,
      target_session_name: t.target_session_name,
      updated_at: t.updated_at,
    });
  }
  return { project_id: projectId, columns, more };
}

/** Reads a resource as the caller; a URI that is not the hub's, or a refused read, is an MCP error. */
export async function readResource(app: Hono<HubEnv>, c: HubContext, caller: McpCaller, uri: string): Promise<TextResourceContents> {
  const ref = resourceOf(uri);
  if (!ref) throw new ResourceNotFoundError(uri, `${uri}: not a resource of this hub (orchestratia://tasks/{id} or orchestratia://projects/{id}/board)`);
  const tasks = caller.audience === "agent" ? "/api/v1/server/tasks" : "/api/v1/tasks";
  let body: unknown;
  if (ref.kind === "task") {
    const answer = await requestAs(app, c, caller.headers, "GET", `${tasks}/${encodeURIComponent(ref.taskId)}`);
    if (answer.status !== 200) throw refused(uri, answer);
    body = answer.body;
  } else {
    const query = new URLSearchParams({ project_id: ref.projectId, limit: String(BOARD_TASKS) });
    const answer = await requestAs(app, c, caller.headers, "GET", tasks, query);
    if (answer.status !== 200) throw refused(uri, answer);
    const page = answer.body as { tasks: TaskSummary[]; next_cursor: string | null };
    body = boardOf(ref.projectId, page.tasks, page.next_cursor !== null);
  }
  return { uri, mimeType: "application/json", text: JSON.stringify(body) };
}
