/**
 * The board: a project's tasks in columns by status, filtered, live. A person drags a card to another column where
 * the lifecycle lets them (board-moves.ts), or moves it from its menu; on a phone it shows one status at a time.
 */
import { useMemo, useRef, useState } from "preact/hooks";
import { boardMove, COLUMNS, labelOf, legalMoves, type MoveCheck } from "../board-moves";
import { adoptStyles } from "../adopt-styles";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import type { Task, TaskStatus } from "../types";
import { toast } from "../ui/toasts";
import { BoardColumn, type DropState } from "./board-column";
import { MoveDialog, type MoveDialogState } from "./board-move-dialog";
import { runMove } from "./board-move-run";
import { useAgentsOnline, useMedia, useMinuteClock } from "./board-hooks";
import { BoardFilters, matches, NO_FILTERS, type Filters } from "./board-filters";
import { PhonePicker, useSwipe } from "./board-phone";
import { ProjectTabs } from "./project-tabs";
import { NewTaskDialog } from "./new-task";
import { ViewSwitch } from "./view-switch";
import boardCss from "./board.css" with { type: "text" };

adoptStyles(boardCss as string);

export { COLUMNS };

const PRIORITY_ORDER = { critical: 0, high: 1, normal: 2, low: 3 } as const;
const byPriorityThenNewest = (a: Task, b: Task) => PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] || b.created_at.localeCompare(a.created_at);
const isMovable = (t: Task) => legalMoves(t).length > 0;

interface Drag {
  task: Task;
  checks: Map<TaskStatus, MoveCheck>;
}

export function Board({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const canWrite = useCanWrite();
  const phone = useMedia("(max-width: 799px)");
  const now = useMinuteClock();
  const online = useAgentsOnline(projectId);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [expanded, setExpanded] = useState<Set<TaskStatus>>(new Set());
  const [picked, setPicked] = useState<TaskStatus | null>(null);
  const [drag, setDrag] = useState<Drag | null>(null);
  // The handlers read the drag from here: a drag's events may come before the board has drawn its start.
  const dragRef = useRef<Drag | null>(null);
  const [over, setOver] = useState<TaskStatus | null>(null);
  const overRef = useRef<TaskStatus | null>(null);
  const [dialog, setDialog] = useState<MoveDialogState>(null);
  const swipe = useSwipe((by) => {
    const at = COLUMNS.findIndex((c) => c.status === phoneStatus);
    setPicked(COLUMNS[(at + by + COLUMNS.length) % COLUMNS.length]!.status);
  });

  const all = useMemo(() => [...state.tasks.values()], [state.tasks]);
  const shown = useMemo(() => all.filter((t) => matches(t, filters)), [all, filters]);
  const byStatus = useMemo(() => {
    const columns = new Map<TaskStatus, Task[]>(COLUMNS.map((c) => [c.status, []]));
    for (const t of shown) columns.get(t.status)?.push(t);
    for (const cards of columns.values()) cards.sort(byPriorityThenNewest);
    return columns;
  }, [shown]);
  // A phone shows one status: the one picked, else the first with tasks.
  const phoneStatus = picked ?? COLUMNS.find((c) => byStatus.get(c.status)!.length > 0)?.status ?? "pending";
  const columns = COLUMNS.filter((c) => (phone ? c.status === phoneStatus : !filters.status || c.status === filters.status));

  /** Starts a move: at once, or after the dialog has asked what it needs. */
  const begin = (task: Task, to: TaskStatus, check: MoveCheck) => {
    if (!check.ok) return toast(`“${task.title}” cannot go to ${labelOf(to)}: ${check.reason}`, "error");
    if ("asks" in check) return setDialog({ task, step: { to, ...check } });
    void runMove(task, check.action).then(
      (said) => toast(said),
      (e: Error) => toast(e.message, "error"),
    );
  };

  const columnAt = (target: EventTarget | null) => ((target as Element | null)?.closest?.(".column")?.getAttribute("data-status") ?? null) as TaskStatus | null;
  const dragHandlers = {
    onDragStart: (e: DragEvent) => {
      const id = (e.target as Element).closest?.(".card")?.getAttribute("data-task-id");
      const task = id ? state.tasks.get(id) : undefined;
      if (!task || !e.dataTransfer) return;
      e.dataTransfer.setData("text/plain", task.id);
      e.dataTransfer.effectAllowed = "move";
      dragRef.current = { task, checks: new Map(COLUMNS.map((c) => [c.status, boardMove(task, c.status)])) };
      setDrag(dragRef.current);
    },
    onDragOver: (e: DragEvent) => {
      const drag = dragRef.current;
      if (!drag || !e.dataTransfer) return;
      const to = columnAt(e.target);
      overRef.current = to;
      setOver(to);
      const legal = to !== null && drag.checks.get(to)?.ok;
      if (legal) e.preventDefault();
      e.dataTransfer.dropEffect = legal ? "move" : "none";
    },
    onDrop: (e: DragEvent) => {
      e.preventDefault();
      const [to, drag] = [columnAt(e.target), dragRef.current];
      if (drag && to) begin(drag.task, to, drag.checks.get(to)!);
      overRef.current = null;
    },
    onDragEnd: (e: DragEvent) => {
      // Let go over a column that refuses the card: say why (the browser only showed a no-drop cursor).
      const [to, drag] = [overRef.current, dragRef.current];
      if (drag && to && to !== drag.task.status && e.dataTransfer?.dropEffect === "none") begin(drag.task, to, drag.checks.get(to)!);
      overRef.current = null;
      dragRef.current = null;
      setOver(null);
      setDrag(null);
    },
  };
  const dropState = (status: TaskStatus): DropState =>
    !drag ? null : status === drag.task.status ? "origin" : drag.checks.get(status)?.ok ? "legal" : "illegal";
  const noteOf = (status: TaskStatus) =>
    status === "running" && online !== null ? `${byStatus.get("running")!.length} running · ${online} agent${online === 1 ? "" : "s"} online` : undefined;

  return (
    <section class="board-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="board" status={state.status} />
      <ViewSwitch projectId={projectId} current="board" />
      {state.error && (
        <p class="problem" role="alert">
          {state.error}
        </p>
      )}
      <div class="board-bar">
        <BoardFilters
          tasks={all}
          filters={filters}
          onChange={setFilters}
          summary={state.loaded ? `${shown.length} of ${all.length} tasks` : "Loading tasks…"}
        />
        {canWrite && <NewTaskDialog projectId={projectId} tasks={all} />}
      </div>
      {phone && <PhonePicker current={phoneStatus} counts={byStatus} onPick={setPicked} />}
      <div
        class={`board${drag ? " dragging" : ""}${phone ? " one-status" : ""}`}
        data-loaded={state.loaded ? "true" : "false"}
        {...dragHandlers}
        {...(phone ? swipe : {})}
      >
        {columns.map((column) => {
          const cards = byStatus.get(column.status)!;
          return (
            <BoardColumn
              key={column.status}
              status={column.status}
              label={column.label}
              cards={cards}
              collapsed={!phone && cards.length === 0 && !expanded.has(column.status)}
              onExpand={() => setExpanded(new Set([...expanded, column.status]))}
              drop={dropState(column.status)}
              over={over === column.status}
              note={noteOf(column.status)}
              now={now}
              canWrite={canWrite}
              isMovable={isMovable}
              onMenu={(task) => setDialog({ task, step: null })}
            />
          );
        })}
      </div>
      <MoveDialog state={dialog} onClose={() => setDialog(null)} />
    </section>
  );
}
