/** What the dashboard reads from the hub (API.md), as far as it shows it. */
export type TaskStatus = "pending" | "assigned" | "planning" | "plan_review" | "running" | "done" | "failed" | "needs_human" | "cancelled";
export type Role = "admin" | "member" | "viewer";

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
