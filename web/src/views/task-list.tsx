/** A project's tasks as a list: searched, sorted by a column, grouped, with bulk actions over the selected rows. Live from the board's store. */
import { useMemo, useState } from "preact/hooks";
import { adoptStyles } from "../adopt-styles";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { groupTasks, matchesSearch, nextSort, rangeBetween, rowsOf, sortTasks, type GroupBy, type Sort } from "../task-table";
import type { Task } from "../types";
import { Empty, Failed, Loading } from "../ui/states";
import { ProjectTabs } from "./project-tabs";
import { TaskBulkBar } from "./task-bulk-bar";
import { TaskTable, type Selection } from "./task-table";
import { ViewSwitch } from "./view-switch";
import listCss from "./task-list.css" with { type: "text" };

// The view loads on its own (its chunk carries the virtualiser): its styles come with it, applied once and kept.
adoptStyles(listCss as string);

const GROUPINGS: { value: GroupBy; label: string }[] = [
  { value: "none", label: "nothing" },
  { value: "status", label: "status" },
  { value: "priority", label: "priority" },
  { value: "assignee", label: "assignee" },
  { value: "type", label: "type" },
];

export function TaskList({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const canWrite = useCanWrite();
  const [search, setSearch] = useState("");
  const [sort, setSort] = useState<Sort>({ key: "updated", dir: "desc" });
  const [groupBy, setGroupBy] = useState<GroupBy>("none");
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<string | null>(null);

  const all = useMemo(() => [...state.tasks.values()], [state.tasks]);
  const found = useMemo(() => all.filter((t) => matchesSearch(t, search)), [all, search]);
  const groups = useMemo(() => groupTasks(sortTasks(found, sort), groupBy), [found, sort, groupBy]);
  const rows = useMemo(() => rowsOf(groups, groupBy !== "none", collapsed), [groups, groupBy, collapsed]);
  /** The tasks shown, in order: what select-all and a shift-click range cover. */
  const shownIds = useMemo(() => rows.flatMap((r) => (r.kind === "task" ? [r.task.id] : [])), [rows]);
  // Only what is shown stays selected: a search or a folded group never leaves hidden tasks under a bulk action.
  const chosen = useMemo(() => shownIds.filter((id) => selected.has(id)).map((id) => state.tasks.get(id)!), [shownIds, selected, state.tasks]);

  const selection: Selection = {
    has: (id) => selected.has(id),
    toggle: (id, range) => {
      const next = new Set(selected);
      const on = !selected.has(id);
      for (const each of range && anchor ? rangeBetween(shownIds, anchor, id) : [id]) on ? next.add(each) : next.delete(each);
      setSelected(next);
      setAnchor(id);
    },
    all: chosen.length === 0 ? "none" : chosen.length === shownIds.length ? "all" : "some",
    toggleAll: () => setSelected(chosen.length === shownIds.length ? new Set() : new Set(shownIds)),
  };
  const toggleGroup = (key: string) => {
    const next = new Set(collapsed);
    next.has(key) ? next.delete(key) : next.add(key);
    setCollapsed(next);
  };

  return (
    <section class="task-list-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="board" status={state.status} />
      <ViewSwitch projectId={projectId} current="list" />
      <div class="list-toolbar" role="search">
        <label class="list-search">
          Search
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="title or id" />
        </label>
        <label>
          Group by
          <select name="group-by" value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value as GroupBy)}>
            {GROUPINGS.map((g) => (
              <option value={g.value} key={g.value}>
                {g.label}
              </option>
            ))}
          </select>
        </label>
        <span class="muted list-count" aria-live="polite">
          {state.loaded ? `${found.length} of ${all.length} tasks` : ""}
        </span>
      </div>
      <div data-loaded={state.loaded ? "true" : "false"} class="task-list-body">
        {state.error ? (
          <Failed what="the tasks" message={state.error} retry={() => location.reload()} />
        ) : !state.loaded ? (
          <Loading what="tasks" />
        ) : all.length === 0 ? (
          <Empty title="No tasks yet.">Tasks created on the board, over the API or by agents appear here.</Empty>
        ) : found.length === 0 ? (
          <Empty title="No task matches the search." />
        ) : (
          <TaskTable
            rows={rows}
            sort={sort}
            onSort={(key) => setSort(nextSort(sort, key))}
            onToggleGroup={toggleGroup}
            selection={canWrite ? selection : null}
          />
        )}
      </div>
      {canWrite && chosen.length > 0 && (
        <TaskBulkBar
          projectId={projectId}
          selected={chosen}
          onClear={() => setSelected(new Set())}
          onDone={(failed: Task[]) => setSelected(new Set(failed.map((t) => t.id)))}
        />
      )}
    </section>
  );
}
