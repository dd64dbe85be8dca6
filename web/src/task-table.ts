/** The list view's rows: which tasks a search keeps, their order by a column, and their groups (pure, so it is tested apart from the page). */
import type { Task, TaskStatus } from "./types";
import { STATUSES } from "./task-statuses";

export type Priority = Task["priority"];
export type SortKey = "title" | "status" | "priority" | "type" | "assignee" | "cost" | "updated";
export type Direction = "asc" | "desc";
export interface Sort {
  key: SortKey;
  dir: Direction;
}
export type GroupBy = "none" | "status" | "priority" | "assignee" | "type";

export { STATUSES };
export const PRIORITIES: Priority[] = ["critical", "high", "normal", "low"];

const STATUS_RANK = new Map(STATUSES.map((s, i) => [s.status, i]));
const PRIORITY_RANK = new Map(PRIORITIES.map((p, i) => [p, i]));
export const statusLabel = (s: TaskStatus) => STATUSES[STATUS_RANK.get(s) ?? 0]?.label ?? s;
export const UNASSIGNED = "unassigned";
export const assigneeOf = (t: Task) => t.assigned_server_name ?? t.target_session_name ?? UNASSIGNED;
export const costOf = (t: Task) => t.usage?.cost_usd ?? 0;

/** A title containing the text, or an id starting with it. */
export function matchesSearch(t: Task, text: string): boolean {
  const q = text.trim().toLowerCase();
  return !q || t.title.toLowerCase().includes(q) || t.id.startsWith(q);
}

const text = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: "base", numeric: true });

/** Ascending order by one column; ties fall back to the newest change first, then the id, so the order is stable. */
function compareBy(key: SortKey, a: Task, b: Task): number {
  switch (key) {
    case "title":
      return text(a.title, b.title);
    case "status":
      return (STATUS_RANK.get(a.status) ?? 99) - (STATUS_RANK.get(b.status) ?? 99);
    case "priority":
      return (PRIORITY_RANK.get(a.priority) ?? 99) - (PRIORITY_RANK.get(b.priority) ?? 99);
    case "type":
      return text(a.type, b.type);
    case "assignee":
      return text(assigneeOf(a), assigneeOf(b));
    case "cost":
      return costOf(a) - costOf(b);
    case "updated":
      return a.updated_at.localeCompare(b.updated_at);
  }
}

export function sortTasks(tasks: Task[], sort: Sort): Task[] {
  const sign = sort.dir === "asc" ? 1 : -1;
  return tasks.slice().sort((a, b) => sign * compareBy(sort.key, a, b) || b.updated_at.localeCompare(a.updated_at) || a.id.localeCompare(b.id));
}

/** The direction a column sorts in first: the newest, the dearest and the most urgent lead. */
export const firstDirection = (key: SortKey): Direction => (key === "cost" || key === "updated" ? "desc" : "asc");
export const nextSort = (current: Sort, key: SortKey): Sort =>
  current.key === key ? { key, dir: current.dir === "asc" ? "desc" : "asc" } : { key, dir: firstDirection(key) };

export interface Group {
  key: string;
  label: string;
  tasks: Task[];
}

function groupKey(by: GroupBy, t: Task): string {
  if (by === "status") return t.status;
  if (by === "priority") return t.priority;
  if (by === "assignee") return assigneeOf(t);
  if (by === "type") return t.type;
  return "";
}

/** Groups of already sorted tasks (kept in that order within each), the groups themselves in their field's natural order. */
export function groupTasks(sorted: Task[], by: GroupBy): Group[] {
  if (by === "none") return [{ key: "", label: "", tasks: sorted }];
  const groups = new Map<string, Task[]>();
  for (const t of sorted) {
    const key = groupKey(by, t);
    const list = groups.get(key);
    list ? list.push(t) : groups.set(key, [t]);
  }
  const rank = (key: string) =>
    by === "status" ? (STATUS_RANK.get(key as TaskStatus) ?? 99) : by === "priority" ? (PRIORITY_RANK.get(key as Priority) ?? 99) : 0;
  return [...groups]
    .sort(([a], [b]) => rank(a) - rank(b) || (a === UNASSIGNED ? 1 : b === UNASSIGNED ? -1 : text(a, b)))
    .map(([key, tasks]) => ({ key, label: by === "status" ? statusLabel(key as TaskStatus) : key, tasks }));
}

/** What the table draws, one entry a row: a group's header, or a task. */
export type Row = { kind: "group"; group: Group; collapsed: boolean } | { kind: "task"; task: Task };

export function rowsOf(groups: Group[], grouped: boolean, collapsed: ReadonlySet<string>): Row[] {
  if (!grouped) return groups.flatMap((g) => g.tasks.map((task): Row => ({ kind: "task", task })));
  return groups.flatMap((g): Row[] => {
    const closed = collapsed.has(g.key);
    return [{ kind: "group", group: g, collapsed: closed }, ...(closed ? [] : g.tasks.map((task): Row => ({ kind: "task", task })))];
  });
}

/** The ids from one row to another, both included, in the order shown (a shift-click's range). */
export function rangeBetween(ids: string[], from: string, to: string): string[] {
  const a = ids.indexOf(from);
  const b = ids.indexOf(to);
  if (a < 0 || b < 0) return [to];
  return ids.slice(Math.min(a, b), Math.max(a, b) + 1);
}
