/** What the Worker asks a ProjectRoom to do, and what it answers. Plain data: it crosses the RPC boundary. */
import type { EnvelopeOutcome } from "../protocol/agent-envelope";
import type { GitDiffStats } from "../protocol/hub-api";
import type { DependencyInput } from "../protocol/orchestratia-v1";
import type { BudgetPeriod, BudgetScope, BudgetThreshold, CodeHealthRow, FileTransferKind, McpStatus, Priority, RunSource, ScheduleRow } from "../db/schema";
import type { DatarefRow } from "../views/datarefs";
import type { TaskView } from "../views/tasks";
import type { ProblemCode } from "../http/problem-codes";
import type { ProjectSettings } from "../domain/project-settings";
import type { UsagePoint } from "../domain/usage";
import type { Review, ReviewPolicy } from "../domain/code-review";

/** Where an attempt's review comes from: the review task an agent completed (or failed), or a model's answer. */
export type ReviewSource =
  { kind: "agent"; reviewTaskId: string } | { kind: "model"; model: string | null; outcome: { ok: true; review: Review } | { ok: false; error: string } };

export type RoomActor =
  | { kind: "person"; userId: string; label: string }
  /** `keyHash`: the sha256 of the API key the agent called with; the room refuses its writes once that key is revoked or replaced. */
  | { kind: "agent"; serverId: string; serverName: string; label: string; keyHash?: string };

export interface NewTask {
  title: string;
  spec: string;
  type: string;
  priority: Priority;
  targetRepo: string | null;
  targetBranch: string | null;
  acceptanceCriteria: string[];
  structuredSpec: Record<string, unknown> | null;
  requirements: Record<string, unknown> | null;
  requirePlan: boolean;
  timeoutSeconds: number | null;
  sourceSessionId: string | null;
  warnings: string[];
  /** What other dialects and tracing add: kept on the task as sent. */
  origin?: TaskOrigin;
}

/** A task to create from its essentials, every other field at what a create that leaves it out means. */
export const newTask = (essentials: Pick<NewTask, "title" | "spec" | "type" | "priority"> & Partial<NewTask>): NewTask => ({
  targetRepo: null,
  targetBranch: null,
  acceptanceCriteria: [],
  structuredSpec: null,
  requirements: null,
  requirePlan: false,
  timeoutSeconds: null,
  sourceSessionId: null,
  warnings: [],
  ...essentials,
});

/** Where a task came from beyond the core protocol: a task-format request's blocks, and its trace. */
export interface TaskOrigin {
  clientId?: string;
  clientRequestHash?: string;
  payload?: unknown;
  context?: Record<string, unknown> | null;
  routing?: Record<string, unknown> | null;
  observability?: Record<string, unknown> | null;
  /** Top-level fields of the request the seed does not name, kept as sent. */
  extensions?: Record<string, unknown> | null;
  /** The W3C traceparent the task carries (the request's, or one the hub began). */
  traceparent?: string;
  /** Given to this server or session as it is created (task-format routing.target). */
  assignTo?: AssignTarget;
  /** A review task the hub creates: the task and attempt it reviews, and the worker's server, never offered it. */
  review?: { of: string; attempt: number; notServer: string | null };
}

export type TaskChanges = Partial<Omit<NewTask, "sourceSessionId" | "warnings" | "origin">> & { warnings?: string[]; payload?: unknown };

export interface AssignTarget {
  serverId: string;
  serverName: string;
  sessionId: string | null;
  sessionName: string | null;
}

/** A session to open: a person's (the daemon then starts it) or an agent's own. */
export interface NewSession {
  id: string;
  serverId: string;
  serverName: string;
  name: string;
  workingDirectory: string | null;
  agentType: string | null;
  role: "worker" | "orchestrator";
  status: "starting" | "running";
}

/** What a session became, as its daemon or a close says. */
export interface SessionChange {
  status: "starting" | "running" | "closed" | "error";
  pid?: number | null;
  tmuxName?: string | null;
  workingDirectory?: string | null;
  exitCode?: number | null;
  error?: string | null;
}

/** The events an agent's remote work leaves in the project's log. */
export type RemoteUseEvent = "remote_exec" | "file_transfer_started" | "file_transfer_completed" | "file_transfer_failed";
/** The events SSH access grants and their tunnels leave in the log of the project the grant names. */
export type AccessEvent = "access_granted" | "access_revoked" | "access_expired" | "tunnel_opened" | "tunnel_closed";
/** A file for a session's machine, or one asked of it: where it goes, and what it is called there. */
export interface NewFileTransfer {
  id: string;
  sessionId: string;
  serverId: string;
  kind: FileTransferKind;
  /** An upload's file name. */
  filename: string | null;
  /** A download's path on the machine. */
  path: string | null;
}

/** How the daemon settled a transfer: an upload written at `path`, a download's bytes stored as `dataref`, or neither. */
export type FileTransferEnd =
  { status: "delivered"; path: string } | { status: "ready"; filename: string; dataref: DatarefRow } | { status: "failed"; error: string };

/** Where a template's firing came from, and what makes it happen once: a schedule's slot, a trigger's delivery. */
export interface RunOrigin {
  source: RunSource;
  scheduleId?: string;
  slot?: string;
  triggerId?: string;
  deliveryId?: string;
}

export type RoomCommand =
  | { op: "create"; task: NewTask; dependencies: DependencyInput[] }
  /** A template's graph made in one batch, all of it or none; `fromText`: parameters came as chat text. */
  | { op: "instantiate"; templateId: string; parameters: Record<string, unknown>; fromText?: boolean; run: RunOrigin }
  | { op: "update"; taskId: string; changes: TaskChanges }
  | { op: "assign"; taskId: string; target: AssignTarget; requirePlan: boolean }
  | { op: "start"; taskId: string }
  | { op: "plan"; taskId: string; plan: unknown }
  | { op: "approve_plan"; taskId: string }
  | { op: "revise_plan"; taskId: string; feedback: string }
  | {
      op: "complete";
      taskId: string;
      result: Record<string, unknown>;
      structured: boolean;
      warnings: string[];
      /** How an agent envelope's result ends the task (done, failed or needs_human); absent for every other result. */
      envelope?: EnvelopeOutcome;
      /** What the agent's last commit changed, when its CLI measured it. */
      gitDiffStats?: GitDiffStats;
      /** A task-format Task Response's artifacts and metadata, sent beside the result. */
      response?: Record<string, unknown> | null;
    }
  | {
      op: "fail";
      taskId: string;
      /** What went wrong, for people (the error block's message). */
      error: string;
      code: string | null;
      /** The rest of a task-format error block, when the agent sent one. */
      details?: unknown;
      recoverable?: boolean;
      /** A failed Task Response's artifacts and metadata. */
      response?: Record<string, unknown> | null;
    }
  | { op: "help"; taskId: string; question: string; context: unknown; interventionType: "help" | "question" | "approval" }
  /** The task's agent asks the agent of another session of the project (the daemon's `ask_agent`): the task keeps its status. */
  | { op: "ask_agent"; taskId: string; question: string; context: unknown; targetSessionId: string }
  | { op: "respond"; interventionId: string; response: string }
  | { op: "retry"; taskId: string }
  /** The assignee declines the task (compute protocol): back to pending, never offered to its server again. */
  | { op: "reject"; taskId: string; reason: string }
  /**
   * The room's alarm found the task's server silent past its lease: requeued or failed (AGENT_LOST), decided again
   * from fresh reads. `connected`: the server has a socket open (agent or daemon) as the alarm looked.
   */
  | { op: "expire_lease"; taskId: string; connected: boolean; leaseSeconds: number }
  /** The liveness rules, as the room's check at `at` saw them: decided again in the batch that writes the flag. */
  | { op: "flag_stalled"; taskId: string; at: string }
  | { op: "flag_unassignable"; taskId: string; at: string }
  /** An admin removed the task's server: handed back as a lost agent's task is (requeued, or failed AGENT_LOST once under way). */
  | { op: "release_task"; taskId: string; serverId: string; serverName: string }
  /** An admin removed a server that served the project: its event. */
  | { op: "server_removed"; serverId: string; serverName: string }
  | { op: "cancel"; taskId: string; reason: string | null }
  /** `notifyDependents`: the sessions working on the tasks that depend on this one hear of the note too. */
  | { op: "note"; taskId: string; content: string; urgent: boolean; notifyDependents?: boolean }
  | { op: "progress"; taskId: string; progress: number; message: string | null }
  | {
      op: "ask";
      question: string;
      context: unknown;
      options: unknown;
      taskId: string | null;
      /** Set for request:ask-user: the agent waits for the answer under this request id until expiresAt. */
      waiting: { serverId: string; correlationId: string; expiresAt: string } | null;
    }
  | { op: "agent_log"; level: string; message: string; context: unknown; taskId: string | null }
  | { op: "expire_questions" }
  | { op: "presence"; serverId: string; serverName: string; online: boolean }
  | { op: "auto_assign"; taskId: string }
  | { op: "sweep" }
  | { op: "add_dependency"; taskId: string; dependency: DependencyInput }
  | { op: "remove_dependency"; taskId: string; dependsOnTaskId: string }
  | { op: "open_session"; session: NewSession }
  | { op: "session_status"; sessionId: string; serverName: string; change: SessionChange }
  /** What the session's daemon did with the agent's MCP configuration. */
  | { op: "session_mcp_status"; sessionId: string; serverName: string; mcpStatus: McpStatus }
  | { op: "disable_webhook"; webhookId: string; reason: string }
  /** An admin changes the project's settings (those left out stay as they are). */
  | { op: "change_settings"; settings: Partial<ProjectSettings> }
  /** An agent's use of another session of the project: a remote command, a file sent (its start and its end). */
  | { op: "remote_use"; event: RemoteUseEvent; data: Record<string, unknown> }
  | { op: "access_use"; event: AccessEvent; data: Record<string, unknown> }
  /** A person lets a task an agent created go ahead (the project approves agents' tasks). */
  | { op: "approve"; taskId: string }
  /** A person created, changed or deleted an approval rule that reaches the project's servers. */
  | { op: "note_rule_change"; change: "created" | "updated" | "deleted"; rule: RuleOnRecord; changed: string[] }
  /** A person's upload, its bytes already stored as this complete DataRef. */
  | { op: "file_upload"; transfer: NewFileTransfer; dataref: DatarefRow }
  /** A person asks the session's daemon for a file. */
  | { op: "file_request"; transfer: NewFileTransfer }
  /** The daemon of the transfer's server settles it (the actor is that server). */
  | { op: "file_settle"; transferId: string; kind: FileTransferKind; end: FileTransferEnd }
  /** A server's daemon scanned a codebase: its summary, and the whole snapshot already stored as this complete DataRef. */
  | { op: "code_health_snapshot"; snapshot: CodeHealthRow; dataref: DatarefRow }
  /** The room's usage intake hands on points it holds (deltas): `retry` when this batch may have committed before. */
  | { op: "record_usage"; batchId: string; points: UsagePoint[]; retry: boolean }
  /** A person sets, changes or removes a budget: what it has spent already is counted at once, its thresholds crossed then. */
  | { op: "create_budget"; budget: NewBudget }
  | { op: "change_budget"; budgetId: string; changes: BudgetChanges }
  | { op: "delete_budget"; budgetId: string }
  /** A person sets up, changes (pauses, resumes) or deletes a schedule: the room sets when it is next due. */
  | { op: "create_schedule"; schedule: ScheduleFields }
  | { op: "change_schedule"; scheduleId: string; changes: Partial<ScheduleFields> }
  | { op: "delete_schedule"; scheduleId: string }
  /** The room's clock reached the schedule's next slot (`now`, epoch ms): fire it, or record why not, once. */
  | { op: "fire_schedule"; scheduleId: string; now: number }
  /** The project's review policy; `apiKeySealed` undefined keeps the key kept, null drops it. */
  | { op: "set_review_policy"; policy: ReviewPolicy; apiKeySealed: string | null | undefined }
  /** Hands an attempt to its reviewer: a review task for an agent (a model's reviewer is woken after). */
  | { op: "start_review"; taskId: string; attempt: number }
  /** What a reviewer answered for an attempt: read from its review task, or a model's outcome. */
  | { op: "settle_review"; taskId: string; attempt: number; source: ReviewSource };

/** What a person sets on a schedule; the room keeps when it is due (`last_slot`, `next_run_at`). */
export type ScheduleFields = Pick<ScheduleRow, "templateId" | "name" | "cron" | "timezone" | "parameters" | "missed" | "overlap" | "paused">;

/** A budget a person sets on the project (scope `project`, per period) or on a task graph (scope `graph`, its anchor task). */
export interface NewBudget {
  scope: BudgetScope;
  taskId: string | null;
  period: BudgetPeriod | null;
  limitUsd: number | null;
  limitTokens: number | null;
  actions: BudgetThreshold[];
}

/** What a change of a budget sets (fields left out stay); the room checks that exactly one limit remains. */
export type BudgetChanges = Partial<Pick<NewBudget, "period" | "limitUsd" | "limitTokens" | "actions">>;

/** An approval rule as the project's log keeps it (its API view's fields). */
export interface RuleOnRecord {
  id: string;
  name: string;
  tool_pattern: string;
  param_pattern: string | null;
  action: "allow" | "deny";
  scope_type: "tenant" | "project" | "server";
  scope_id: string | null;
  agent_filter: string;
  is_active: boolean;
}

export interface ProblemData {
  status: 400 | 401 | 403 | 404 | 409 | 422 | 503;
  code: ProblemCode;
  detail: string;
  errors?: { path: string; message: string }[];
  extensions?: Record<string, unknown>;
}

/** What an operation cost inside the room: D1 round trips (reads plus the one batch) and time, shared by the operations committed together. */
export interface RoomMetrics {
  d1Queries: number;
  ms: number;
  /** Of `ms`, the time its batches took to come back from D1. */
  batchMs: number;
  operations: number;
  /** What the bill is made of, as D1 reported it: rows the room's calls read and wrote. */
  rowsRead: number;
  rowsWritten: number;
  /** Calls whose rows D1 did not report (src/db/d1-meta.ts). */
  uncounted: number;
  /** Calls the room made on other Durable Objects (a server's link, an integration's lane). */
  doRequests: number;
}

/** An operation's answer; `view` is the task as the batch that committed it left it, when the caller asked and the operation wrote. */
export type RoomAnswer =
  | {
      ok: true;
      taskId: string;
      data?: Record<string, unknown>;
      /** The request repeated what was already so (a completion with the same result): nothing was written. */
      unchanged?: true;
      view?: TaskView;
    }
  | { ok: false; problem: ProblemData };

/** `bookmark`: where D1 stood after the operation's writes committed (none when it wrote nothing); `shard`: the
 * project's, when it is not the directory's (the request reads the project's rows there, src/db/shards.ts). */
export type RoomResult = RoomAnswer & { metrics: RoomMetrics; bookmark?: string; shard?: string };
