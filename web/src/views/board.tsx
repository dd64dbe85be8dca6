/** The board: a project's tasks in columns by status, filtered, live. */
import { useMemo, useState } from "preact/hooks";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { linkProps } from "../router";
import type { Task, TaskStatus } from "../types";
import { ProjectTabs } from "./project-tabs";
import { ApproveButton, awaitsApproval } from "./controls";
import { NewTaskDialog } from "./new-task";
import { UsageBadge } from "./usage-badge";
import { ViewSwitch } from "./view-switch";

export const COLUMNS: { status: TaskStatus; label: string }[] = [
  { status: "pending", label: "Pending" },
  { status: "assigned", label: "Assigned" },
  { status: "planning", label: "Planning" },
  { status: "plan_review", label: "Plan review" },
  { status: "running", label: "Running" },
  { status: "needs_human", label: "Needs a human" },
  { status: "done", label: "Done" },
  { status: "failed", label: "Failed" },
  { status: "cancelled", label: "Cancelled" },
];

const PRIORITY_ORDER = { critical: 0, high: 1, normal: 2, low: 3 } as const;

interface Filters {
  status: string;
  assignee: string;
  type: string;
  text: string;
}

function matches(t: Task, f: Filters) {
  if (f.status && t.status !== f.status) return false;
  if (f.assignee && (t.assigned_server_name ?? "(unassigned)") !== f.assignee) return false;
  if (f.type && t.type !== f.type) return false;
  const q = f.text.trim().toLowerCase();
  return !q || t.title.toLowerCase().includes(q) || t.spec.toLowerCase().includes(q) || t.id.startsWith(q);
}

export function Board({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const [filters, setFilters] = useState<Filters>({ status: "", assignee: "", type: "", text: "" });
  const all = useMemo(() => [...state.tasks.values()], [state.tasks]);
  const shown = useMemo(() => all.filter((t) => matches(t, filters)), [all, filters]);
  const assignees = useMemo(() => [...new Set(all.map((t) => t.assigned_server_name ?? "(unassigned)"))].sort(), [all]);
  const types = useMemo(() => [...new Set(all.map((t) => t.type))].sort(), [all]);
  const set = (key: keyof Filters) => (e: Event) => setFilters({ ...filters, [key]: (e.currentTarget as HTMLInputElement).value });

  return (
    <section class="board-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="board" status={state.status} />
      <ViewSwitch projectId={projectId} current="board" />
      {state.error && (
        <p class="problem" role="alert">
          {state.error}
        </p>
      )}
      <div class="filters" role="search">
        <label>
          Status
          <select value={filters.status} onChange={set("status")}>
            <option value="">all</option>
            {COLUMNS.map((c) => (
              <option value={c.status}>{c.label}</option>
            ))}
          </select>
        </label>
        <label>
          Assignee
          <select value={filters.assignee} onChange={set("assignee")}>
            <option value="">all</option>
            {assignees.map((a) => (
              <option value={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          Type
          <select value={filters.type} onChange={set("type")}>
            <option value="">all</option>
            {types.map((t) => (
              <option value={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Search
          <input type="search" value={filters.text} onInput={set("text")} placeholder="title, spec or id" />
        </label>
        <span class="muted" aria-live="polite">
          {state.loaded ? `${shown.length} of ${all.length} tasks` : "Loading tasks…"}
        </span>
      </div>
      {useCanWrite() && <NewTaskDialog projectId={projectId} tasks={all} />}
      <div class="board" data-loaded={state.loaded ? "true" : "false"}>
        {COLUMNS.filter((c) => !filters.status || c.status === filters.status).map((column) => {
          const cards = shown
            .filter((t) => t.status === column.status)
            .sort((a, b) => PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] || b.created_at.localeCompare(a.created_at));
          return (
            <section class="column" data-status={column.status} aria-label={column.label} key={column.status}>
              <h2>
                {column.label} <span class="count">{cards.length}</span>
              </h2>
              <ul>
                {cards.map((t) => (
                  <TaskCard task={t} key={t.id} />
                ))}
              </ul>
            </section>
          );
        })}
      </div>
    </section>
  );
}

function TaskCard({ task }: { task: Task }) {
  const canWrite = useCanWrite();
  const awaiting = awaitsApproval(task);
  return (
    <li class={`card priority-${task.priority}`} data-task-id={task.id}>
      <a {...linkProps(`/projects/${task.project_id}/tasks/${task.id}`)}>{task.title}</a>
      <div class="meta">
        <span class={`badge priority-${task.priority}`}>{task.priority}</span>
        {task.blocked && <span class="badge blocked">blocked</span>}
        {awaiting && <span class="badge awaiting">awaiting approval</span>}
        <span class="badge type">{task.type}</span>
        <UsageBadge usage={task.usage} />
        <span class="assignee">{task.assigned_server_name ?? "unassigned"}</span>
      </div>
      {awaiting && canWrite && <ApproveButton task={task} />}
    </li>
  );
}
