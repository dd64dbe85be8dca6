/** The board's filters: status, assignee, type, and text over title, spec and id. */
import { useMemo } from "preact/hooks";
import { COLUMNS } from "../board-moves";
import type { Task } from "../types";

export interface Filters {
  status: string;
  assignee: string;
  type: string;
  text: string;
}

export const NO_FILTERS: Filters = { status: "", assignee: "", type: "", text: "" };

export function matches(t: Task, f: Filters) {
  if (f.status && t.status !== f.status) return false;
  if (f.assignee && (t.assigned_server_name ?? "(unassigned)") !== f.assignee) return false;
  if (f.type && t.type !== f.type) return false;
  const q = f.text.trim().toLowerCase();
  return !q || t.title.toLowerCase().includes(q) || t.spec.toLowerCase().includes(q) || t.id.startsWith(q);
}

export function BoardFilters(props: { tasks: Task[]; filters: Filters; onChange: (f: Filters) => void; summary: string }) {
  const { tasks, filters } = props;
  const assignees = useMemo(() => [...new Set(tasks.map((t) => t.assigned_server_name ?? "(unassigned)"))].sort(), [tasks]);
  const types = useMemo(() => [...new Set(tasks.map((t) => t.type))].sort(), [tasks]);
  const set = (key: keyof Filters) => (e: Event) => props.onChange({ ...filters, [key]: (e.currentTarget as HTMLInputElement).value });
  return (
    <div class="filters" role="search">
      <label class="status-filter">
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
      <label class="search-filter">
        Search
        <input type="search" value={filters.text} onInput={set("text")} placeholder="title, spec or id" />
      </label>
      <span class="muted" aria-live="polite">
        {props.summary}
      </span>
    </div>
  );
}
