/**
 * The permission log (API.md "Approval rules and the permission log"): daemons post what their agents' PreToolUse
 * hooks logged, people read a project's entries. Each project's entries are written by its log writer, never through
 * its room: a flood of entries costs the room one small notice per batch, not a place in its queue.
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { agent, currentServer, person } from "../middleware/guards";
import { nowIso } from "../db/client";
import { existingProjects, logPage, sessionsOfServer, type LogRow } from "../db/permission-log";
import { countedStub } from "../db/round-trips";
import { logWriterStub } from "../permission-log/writer";
import { onEveryShard } from "../db/shards";
import { PERMISSION_DECISIONS } from "../db/schema";
import { tooDeepUnder, TOO_DEEP } from "../domain/json-depth";
import { decodeCursor, encodeCursor } from "../domain/page-cursor";
import { oneAtATime } from "../domain/one-at-a-time";
import { placeEntry } from "../domain/permission-placement";
import { keptToolInput } from "../domain/tool-input";
import { jsonBody, parseWith, readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { uuid } from "../http/fields";
import { documented } from "../openapi/operation";
import { zodFieldErrors, type FieldError } from "../protocol/field-errors";
import { MAX_ENTRIES_PER_POST, permissionEntrySchema, permissionLogPost, type PermissionEntry } from "../protocol/permission-log";
import { logPostResultSchema, permissionEntryView, permissionLogPageSchema } from "../views/permission-log";

/**
 * Posts are read and checked one at a time in an isolate, a few entries a turn of its event loop: however many daemons
 * post at once, a task request sharing the isolate waits behind one slice of that work, not behind every post's.
 */
const checking = oneAtATime();
const ENTRIES_PER_TURN = 25;
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Invalid entries described in an answer; the rest are only counted. */
const MAX_ERRORS_REPORTED = 20;

export const permissionLogAgentRoutes = new Hono<HubEnv>();
export const permissionLogRoutes = new Hono<HubEnv>();

/** Each entry checked on its own: the good ones with their index, and what was wrong with the others. */
async function checkedEntries(raw: unknown[]) {
  const good: PermissionEntry[] = [];
  const errors: FieldError[] = [];
  let invalid = 0;
  for (const [i, value] of raw.entries()) {
    // Checking hundreds of entries takes milliseconds: other requests of the isolate get their turns in between.
    if (i > 0 && i % ENTRIES_PER_TURN === 0) await nextTurn();
    const prefix = `entries.${i}`;
    const deep = tooDeepUnder(value);
    const parsed = deep === null ? permissionEntrySchema.safeParse(value) : null;
    if (parsed?.success) {
      good.push(parsed.data);
      continue;
    }
    invalid++;
    if (errors.length < MAX_ERRORS_REPORTED)
      errors.push(...(parsed ? zodFieldErrors(parsed.error, prefix) : [{ path: `${prefix}.${deep}`, message: TOO_DEEP }]).slice(0, 3));
  }
  return { good, invalid, errors: errors.slice(0, MAX_ERRORS_REPORTED) };
}

/** The rows by project, in the order they came. */
function byProject(rows: LogRow[]): Map<string, LogRow[]> {
  const groups = new Map<string, LogRow[]>();
  for (const row of rows) {
    const group = groups.get(row[1]);
    if (group) group.push(row);
    else groups.set(row[1], [row]);
  }
  return groups;
}

permissionLogAgentRoutes.post(
  "/permissions/log",
  documented({
    id: "postPermissionLog",
    tag: "Approval rules",
    summary: "Post the agents' permission log",
    description:
      "What the daemon's PreToolUse hook logged since the last post (hub.py `permlog_flush_loop`, every 5 s), for any of the server's sessions. " +
      `At most ${MAX_ENTRIES_PER_POST} entries (422 naming \`entries\` beyond). Each entry is checked on its own: the well-formed ones are kept, ` +
      "and the answer counts the rest as `invalid` (with `errors` for the first ones). An entry whose session is not one of the server's, or whose " +
      "project is not its session's (or, without a session, one the server serves), is `dropped`. An entry without `project_id` takes its " +
      "session's; each is filed under the task its session is working on (assigned, planning or running) when it arrives. `created_at` is " +
      "kept in UTC, and never later than the time the hub received it. A `tool_input` over 8 KiB of JSON has its long strings cut.",
    caller: "agent",
    body: permissionLogPost,
    bodyRequired: true,
    responses: { 201: logPostResultSchema },
  }),
  agent,
  async (c) => {
    const server = currentServer(c);
    // Each entry is checked for depth on its own, so that one too deep is counted rather than refusing the post.
    const { good, invalid, errors } = await checking(async () => checkedEntries(parseWith(permissionLogPost, await jsonBody(c, false)).entries));
    const receivedAt = nowIso();
    const sessionIds = [...new Set(good.flatMap((e) => (e.session_id ? [e.session_id] : [])))];
    const unsessioned = [...new Set(good.flatMap((e) => (!e.session_id && e.project_id ? [e.project_id] : [])))];
    const served = (projectId: string) => server.projectIds == null || server.projectIds.includes(projectId);
    // Sessions on the shards their projects live on; projects in the directory.
    const [found, projects] = await Promise.all([
      onEveryShard(c.env, async (d1) => [...(await sessionsOfServer(d1, server.id, sessionIds))]),
      existingProjects(c.env.DB, unsessioned.filter(served)),
    ]);
    const sessions = new Map(found.flat());
    const sessionProjects = new Set([...sessions.values()].map((s) => s.project_id));
    const serves = (projectId: string) => served(projectId) && (sessionProjects.has(projectId) || projects.has(projectId));
    const rows: LogRow[] = [];
    for (const entry of good) {
      const place = placeEntry(entry, { sessions, serves });
      if (!place) continue;
      const input = keptToolInput(entry.tool_input);
      rows.push([
        crypto.randomUUID(),
        place.projectId,
        place.sessionId,
        place.taskId,
        entry.tool_name,
        input.json,
        input.truncated ? 1 : 0,
        entry.decision,
        entry.matched_rule_id,
        entry.reason,
        entry.agent_name,
        entry.created_at < receivedAt ? entry.created_at : receivedAt,
        server.id,
        receivedAt,
      ]);
    }
    const written = await Promise.all([...byProject(rows)].map(([projectId, group]) => countedStub(logWriterStub(c.env, projectId)).write(group)));
    c.header("Server-Timing", `log-d1;desc="rows written=${written.reduce((a, b) => a + b, 0)}"`, { append: true });
    return c.json({ accepted: rows.length, dropped: good.length - rows.length, invalid, errors }, 201);
  },
);

const logQuery = z.object({
  session_id: uuid.optional(),
  task_id: uuid.optional(),
  decision: z.enum(PERMISSION_DECISIONS, { error: `must be one of ${PERMISSION_DECISIONS.join(", ")}` }).optional(),
  tool: z
    .string()
    .min(1)
    .max(200, "must be at most 200 characters")
    .optional()
    .meta({ description: "A tool name, exactly (`Bash`, `shell`, `run_shell_command`)" }),
  before: z
    .string()
    .max(500)
    .transform((text, ctx) => decodeCursor(text) ?? (ctx.addIssue({ code: "custom", message: "must be a `next_before` the hub returned" }), z.NEVER))
    .optional()
    .meta({ description: "A page's `next_before`: the entries older than the page's last" }),
  limit: z.coerce.number().int("must be a whole number").min(1, "must be at least 1").max(500, "must be at most 500").default(100),
});

permissionLogRoutes.get(
  "/:id/permission-log",
  documented({
    id: "listPermissionLog",
    tag: "Approval rules",
    summary: "The project's permission log, newest first",
    description:
      "Every tool call the hooks of the project's sessions logged, kept `PERMISSION_LOG_DAYS` (30 by default); for a session the hook has " +
      "not logged, the calls Claude Code's telemetry reported (`source: telemetry`), until the hook's entries replace them. Filters combine; " +
      "page with `before` (the previous page's `next_before`): no entry is given twice or skipped, whatever entries share a time.",
    caller: "person",
    query: logQuery,
    responses: { 200: permissionLogPageSchema },
  }),
  person("viewer"),
  async (c) => {
    // The project's entries are on its shard.
    const project = await projectDataFor(c, c.req.param("id")!);
    const q = readQuery(c, logQuery);
    const rows = await logPage(c.var.db, {
      projectId: project.id,
      sessionId: q.session_id,
      taskId: q.task_id,
      decision: q.decision,
      tool: q.tool,
      before: q.before,
      limit: q.limit,
    });
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return c.json({
      entries: page.map((r) => permissionEntryView(r.entry, r.sessionName)),
      next_before: rows.length > q.limit && last ? encodeCursor(last.entry.createdAt, last.entry.id) : null,
    });
  },
);
