/**
 * One status of the board: its header (label, count, and for Running what is running against the agents online), and
 * its cards as a virtual list; an empty column folds to a narrow strip until opened.
 */
import { ChevronsLeftRight } from "lucide";
import { useRef } from "preact/hooks";
import type { Task, TaskStatus } from "../types";
import { Icon } from "../ui/icon";
import { useVirtualList } from "../virtual-list";
import { BoardCard } from "./board-card";

/** Where a dragged card may land: this column takes it, refuses it, or the card came from here. */
export type DropState = "legal" | "illegal" | "origin" | null;

interface Props {
  status: TaskStatus;
  label: string;
  cards: Task[];
  collapsed: boolean;
  onExpand: () => void;
  drop: DropState;
  over: boolean;
  /** What to say beside the count (Running: the agents online). */
  note?: string;
  now: number;
  canWrite: boolean;
  isMovable: (task: Task) => boolean;
  onMenu: (task: Task) => void;
}

/** A card of one line of title, before it is measured. */
const CARD_ESTIMATE = 64;

export function BoardColumn(props: Props) {
  const { status, label, cards, drop } = props;
  const classes = ["column", props.collapsed && "collapsed", drop && `drop-${drop}`, props.over && "drop-over"].filter(Boolean).join(" ");
  if (props.collapsed)
    return (
      <section class={classes} data-status={status} aria-label={label}>
        <button type="button" class="column-strip" onClick={props.onExpand} aria-expanded="false" title={`${label}: no tasks (show the column)`}>
          <Icon icon={ChevronsLeftRight} size={14} />
          <span class="strip-label">{label}</span>
          <span class="count">{cards.length}</span>
        </button>
      </section>
    );
  return (
    <section class={classes} data-status={status} aria-label={label}>
      <h2>
        <span class="column-label">{label}</span> <span class="count">{cards.length}</span>
        {props.note && <span class="wip-note">{props.note}</span>}
      </h2>
      <CardList {...props} />
    </section>
  );
}

function CardList({ cards, now, canWrite, isMovable, onMenu }: Props) {
  const scroller = useRef<HTMLDivElement>(null);
  const list = useVirtualList({
    count: cards.length,
    getScrollElement: () => scroller.current,
    estimateSize: CARD_ESTIMATE,
    getItemKey: (i) => cards[i]!.id,
    // A column of a few dozen cards is drawn whole (the browser's find-in-page finds them); a long one, only around the view.
    overscan: 20,
    gap: 6,
  });
  return (
    <div class="column-body" ref={scroller}>
      <ul style={{ height: `${list.getTotalSize()}px` }}>
        {list.getVirtualItems().map((row) => {
          const task = cards[row.index]!;
          const movable = canWrite && isMovable(task);
          return (
            <li
              key={task.id}
              class={`card priority-${task.priority}`}
              data-task-id={task.id}
              data-index={row.index}
              draggable={movable}
              ref={list.measureElement}
              style={{ transform: `translateY(${row.start}px)` }}
            >
              <BoardCard task={task} now={now} canWrite={canWrite} movable={movable} onMenu={onMenu} />
            </li>
          );
        })}
      </ul>
    </div>
  );
}
