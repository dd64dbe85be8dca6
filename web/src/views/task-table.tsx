/** The list view's table: sortable headers, group header rows that fold, a checkbox a row, and only the rows near the viewport once there are many. */
import { ArrowDown, ArrowUp, ChevronDown, ChevronRight } from "lucide";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { linkProps } from "../router";
import { assigneeOf, statusLabel, type Row, type Sort, type SortKey } from "../task-table";
import { Icon } from "../ui/icon";
import { ReviewMark } from "./review-mark";
import { UsageBadge } from "./usage-badge";
import { useWindowRows } from "./use-window-rows";
import { When } from "./when";

/** Past this many rows only those near the viewport are drawn. */
export const VIRTUAL_FROM = 200;
const ROW_ESTIMATE = 41;

export const COLUMNS: { key: SortKey; label: string }[] = [
  { key: "title", label: "Title" },
  { key: "status", label: "Status" },
  { key: "priority", label: "Priority" },
  { key: "type", label: "Type" },
  { key: "assignee", label: "Assignee" },
  { key: "cost", label: "Cost" },
  { key: "updated", label: "Updated" },
];

export interface Selection {
  has: (id: string) => boolean;
  /** The checkbox of a row was clicked (with shift: the range from the last one clicked). */
  toggle: (id: string, range: boolean) => void;
  /** Whether every shown task is selected, some are, or none. */
  all: "all" | "some" | "none";
  toggleAll: () => void;
}

interface Props {
  rows: Row[];
  sort: Sort;
  onSort: (key: SortKey) => void;
  onToggleGroup: (key: string) => void;
  /** Absent for those who may only watch: no checkboxes then. */
  selection: Selection | null;
}

export function TaskTable({ rows, sort, onSort, onToggleGroup, selection }: Props) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [start, setStart] = useState(0);
  const virtual = rows.length > VIRTUAL_FROM;
  // Where the rows begin in the document: what is above them (toolbars, a bulk bar) may change height.
  useLayoutEffect(() => {
    const top = body.current ? body.current.getBoundingClientRect().top + window.scrollY : 0;
    if (Math.abs(top - start) > 0.5) setStart(top);
  });
  const windowRows = useWindowRows({ count: rows.length, estimate: ROW_ESTIMATE, start, enabled: virtual, key: (i) => keyOf(rows[i]!) });
  const span = COLUMNS.length + (selection ? 1 : 0);

  const draw = (row: Row, index: number) =>
    row.kind === "group" ? (
      <tr class="group-row" key={keyOf(row)} data-index={index} ref={virtual ? windowRows.measureElement : undefined} aria-rowindex={index + 2}>
        <th colSpan={span} scope="rowgroup">
          <button type="button" class="ghost group-toggle" aria-expanded={!row.collapsed} onClick={() => onToggleGroup(row.group.key)}>
            <Icon icon={row.collapsed ? ChevronRight : ChevronDown} />
            <span class="group-label">{row.group.label}</span>
            <span class="count">{row.group.tasks.length}</span>
          </button>
        </th>
      </tr>
    ) : (
      <TaskRow row={row} index={index} selection={selection} measure={virtual ? windowRows.measureElement : undefined} key={keyOf(row)} />
    );

  let drawn;
  if (!virtual) drawn = rows.map(draw);
  else {
    const items = windowRows.getVirtualItems();
    const margin = windowRows.options.scrollMargin;
    const before = items.length ? items[0]!.start - margin : 0;
    const after = items.length ? windowRows.getTotalSize() - (items[items.length - 1]!.end - margin) : 0;
    drawn = [
      before > 0 && <Spacer key="before" span={span} height={before} />,
      ...items.map((item) => draw(rows[item.index]!, item.index)),
      after > 0 && <Spacer key="after" span={span} height={after} />,
    ];
  }

  return (
    <>
      <PhoneSort sort={sort} onSort={onSort} selection={selection} />
      <table class="data task-table" aria-rowcount={rows.length + 1} data-virtual={virtual ? "true" : "false"}>
        <thead>
          <tr aria-rowindex={1}>
            {selection && (
              <th class="check" scope="col">
                <label class="check-target">{selectAll(selection, "Select all shown tasks")}</label>
              </th>
            )}
            {COLUMNS.map((c) => (
              <th scope="col" class={`col-${c.key}`} key={c.key} aria-sort={sort.key === c.key ? (sort.dir === "asc" ? "ascending" : "descending") : undefined}>
                <button type="button" class="sort" onClick={() => onSort(c.key)}>
                  {c.label}
                  {sort.key === c.key && <Icon icon={sort.dir === "asc" ? ArrowUp : ArrowDown} size={14} />}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody ref={body}>{drawn}</tbody>
      </table>
    </>
  );
}

const selectAll = (selection: Selection, label: string) => (
  <input type="checkbox" aria-label={label} checked={selection.all === "all"} indeterminate={selection.all === "some"} onClick={() => selection.toggleAll()} />
);

/** On phones the column headers give way to a sort select, an order toggle and a select-all box, each a full touch target. */
function PhoneSort({ sort, onSort, selection }: Pick<Props, "sort" | "onSort" | "selection">) {
  return (
    <div class="phone-sort">
      {selection && <label class="check-target">{selectAll(selection, "Select all shown tasks")} All</label>}
      <label>
        Sort by
        <select name="sort" value={sort.key} onChange={(e) => onSort(e.currentTarget.value as SortKey)}>
          {COLUMNS.map((c) => (
            <option value={c.key} key={c.key}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        class="secondary icon-button"
        onClick={() => onSort(sort.key)}
        aria-label={sort.dir === "asc" ? "Ascending: reverse the order" : "Descending: reverse the order"}
      >
        <Icon icon={sort.dir === "asc" ? ArrowUp : ArrowDown} />
      </button>
    </div>
  );
}

const keyOf = (row: Row) => (row.kind === "group" ? `group:${row.group.key}` : row.task.id);

function Spacer({ span, height }: { span: number; height: number }) {
  return (
    <tr class="spacer" aria-hidden="true">
      <td colSpan={span} style={{ height: `${height}px` }} />
    </tr>
  );
}

function TaskRow(props: {
  row: Extract<Row, { kind: "task" }>;
  index: number;
  selection: Selection | null;
  measure?: (el: HTMLTableRowElement | null) => void;
}) {
  const { task } = props.row;
  const selected = props.selection?.has(task.id) ?? false;
  return (
    <tr class={selected ? "selected" : undefined} data-task-id={task.id} data-index={props.index} ref={props.measure} aria-rowindex={props.index + 2}>
      {props.selection && (
        <td class="check">
          <label class="check-target">
            <input type="checkbox" aria-label={`Select ${task.title}`} checked={selected} onClick={(e) => props.selection!.toggle(task.id, e.shiftKey)} />
          </label>
        </td>
      )}
      <td class="col-title">
        <a {...linkProps(`/projects/${task.project_id}/tasks/${task.id}`)}>{task.title}</a>
        {task.blocked && <span class="badge blocked">blocked</span>}
        <ReviewMark review={task.review} />
      </td>
      <td class="col-status">
        <span class={`badge status status-${task.status}`}>{statusLabel(task.status)}</span>
      </td>
      <td class="col-priority">
        <span class={`badge priority-${task.priority}`}>{task.priority}</span>
      </td>
      <td class="col-type">{task.type}</td>
      <td class="col-assignee">{assigneeOf(task)}</td>
      <td class="col-cost">
        <UsageBadge usage={task.usage} />
      </td>
      <td class="col-updated">
        <When iso={task.updated_at} />
      </td>
    </tr>
  );
}
