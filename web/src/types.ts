/** What the dashboard reads from the hub (API.md), as far as it shows it. */
import type { EventType } from "./event-types";

export type TaskStatus = "pending" | "assigned" | "planning" | "plan_review" | "running" | "done" | "failed" | "needs_human" | "cancelled";
export type Role = "admin" | "member" | "viewer";
export type SessionStatus = "starting" | "running" | "closed" | "error";

export interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: { path: string; message: string }[];
}

export interface Me {
  id: string;
  email: string;
  name: string | null;
  role: Role;
}

export interface Project {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  created_at: string;
}

export interface Dependency {
  depends_on_task_id: string;
  dependency_type: "blocks" | "input" | "related";
  contract_key: string | null;
  resolved: boolean;
  depends_on_status?: TaskStatus | null;
}

export interface Note {
  id: string;
  author: string;
  content: string;
  urgent: boolean;
  created_at: string;
}

export interface Task {
  id: string;
  project_id: string;
  title: string;
  spec: string;
  type: string;
  priority: "low" | "normal" | "high" | "critical";
  status: TaskStatus;
  target_repo: string | null;
  target_branch: string | null;
  acceptance_criteria: string[];
  structured_spec: Record<string, unknown> | null;
  requirements: Record<string, unknown> | null;
  result: Record<string, unknown> | null;
  plan: unknown;
  plan_feedback: string | null;
  require_plan: boolean;
  assigned_server_id: string | null;
  assigned_server_name: string | null;
  target_session_name: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  blocked: boolean;
  dependencies: Dependency[];
  resolved_inputs: Record<string, unknown>;
  recent_notes: Note[];
  warnings: string[];
  /** A task-format request's own id and blocks (seeds/task-format.md), kept as sent. */
  client_id?: string | null;
  payload?: unknown;
  context?: Record<string, unknown> | null;
  routing?: Record<string, unknown> | null;
}

export interface HubEvent {
  seq: number;
  project_id: string;
  event_type: string;
  task_id: string | null;
  actor: string;
  data: Record<string, unknown>;
  created_at: string;
}

export interface Intervention {
  id: string;
  task_id: string | null;
  project_id: string;
  intervention_type: string;
  question: string;
  context: unknown;
  status: string;
  response: string | null;
  asked_by: string;
  created_at: string;
}

/** A server agents run on, as people see it. */
export interface Server {
  id: string;
  name: string;
  hostname: string;
  os: string | null;
  status: "online" | "offline";
  /** Whether the official daemon's socket is connected (older hubs leave it out). */
  daemon_connected?: boolean;
  last_heartbeat: string | null;
  capabilities: { languages?: string[]; tools?: string[]; tags?: string[]; environments?: string[]; repos?: Record<string, unknown> } | null;
  repos: unknown;
  revoked: boolean;
  /** The projects it serves (null: all); shown to admins only. */
  project_ids?: string[] | null;
  active_tasks: number;
  max_concurrent_tasks: number;
  /** Open agent sessions on the server, in projects the person can see. */
  sessions: { id: string; name: string; project_id: string }[];
}

/** An agent session a daemon runs on a server, in a terminal people can watch. */
export interface Session {
  id: string;
  name: string;
  server_id: string;
  server_name: string;
  project_id: string;
  status: SessionStatus;
  working_directory: string | null;
  agent_type: string | null;
  role: "worker" | "orchestrator";
  pid: number | null;
  exit_code: number | null;
  error: string | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

/** Whether the person's Telegram chat is linked (one chat a person). */
export interface TelegramLink {
  linked: boolean;
  /** The person sent /mute: the bot tells them nothing until they send it again. */
  muted: boolean;
  linked_at: string | null;
}

/** A one-time code for linking a chat, good for a few minutes. */
export interface TelegramLinkCode {
  code: string;
  expires_at: string;
  deep_link: string;
}

/** Where a project's events are posted, signed the Standard Webhooks way. */
export interface Webhook {
  id: string;
  project_id: string;
  url: string;
  /** The event types it is sent (null: all). */
  events: EventType[] | null;
  description: string | null;
  enabled: boolean;
  /** Why the hub disabled it (its deliveries ran out of tries, or too many waited). */
  disabled_reason: string | null;
  /** Until when the secret rotated out still signs beside the new one. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A webhook as created or rotated: its signing secret is in the answer this once. */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface Delivery {
  id: string;
  /** An event type, or `webhook.test`. */
  event_type: string;
  seq: number | null;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The start of the receiver's answer. */
  response_body: string | null;
  at: string;
}
