/** A phone's board shows one status at a time: a picker with each status's count, the next and previous, and a swipe. */
import { ChevronLeft, ChevronRight } from "lucide";
import { useRef } from "preact/hooks";
import { COLUMNS } from "../board-moves";
import type { Task, TaskStatus } from "../types";
import { Icon } from "../ui/icon";

const SWIPE_PX = 60;

export function PhonePicker({ current, counts, onPick }: { current: TaskStatus; counts: Map<TaskStatus, Task[]>; onPick: (s: TaskStatus) => void }) {
  const at = COLUMNS.findIndex((c) => c.status === current);
  const step = (by: number) => onPick(COLUMNS[(at + by + COLUMNS.length) % COLUMNS.length]!.status);
  return (
    <div class="status-picker">
      <button type="button" class="icon-button" aria-label="Previous status" onClick={() => step(-1)}>
        <Icon icon={ChevronLeft} />
      </button>
      <label>
        <span class="visually-hidden">Status shown</span>
        <select value={current} onChange={(e) => onPick(e.currentTarget.value as TaskStatus)}>
          {COLUMNS.map((c) => (
            <option key={c.status} value={c.status}>
              {c.label} ({counts.get(c.status)?.length ?? 0})
            </option>
          ))}
        </select>
      </label>
      <button type="button" class="icon-button" aria-label="Next status" onClick={() => step(1)}>
        <Icon icon={ChevronRight} />
      </button>
    </div>
  );
}

/** A sideways swipe over the board shows the next status (leftwards) or the previous one. */
export function useSwipe(onSwipe: (by: 1 | -1) => void) {
  const start = useRef<{ x: number; y: number } | null>(null);
  return {
    onTouchStart: (e: TouchEvent) => {
      const t = e.touches[0];
      start.current = t ? { x: t.clientX, y: t.clientY } : null;
    },
    onTouchEnd: (e: TouchEvent) => {
      const t = e.changedTouches[0];
      const from = start.current;
      start.current = null;
      if (!t || !from) return;
      const dx = t.clientX - from.x;
      if (Math.abs(dx) > SWIPE_PX && Math.abs(dx) > 2 * Math.abs(t.clientY - from.y)) onSwipe(dx < 0 ? 1 : -1);
    },
  };
}
