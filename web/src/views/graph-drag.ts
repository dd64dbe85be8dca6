/**
 * Dragging from one task of the graph to another, with a mouse or a pen: a line follows the pointer from the task
 * it started on, the task under the pointer is marked, and releasing over another task connects the two. A press
 * that never moves far stays a click (it opens the task). Touch keeps scrolling the graph: phones use the form.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Point } from "./graph-layout";

/** How far the pointer moves before a press becomes a drag, in screen pixels. */
const DRAG_THRESHOLD = 6;

export interface DragLine {
  from: string;
  start: Point;
  end: Point;
  /** The task under the pointer, if it is another one. */
  over: string | null;
}

const taskUnder = (x: number, y: number) => (document.elementFromPoint(x, y)?.closest("[data-task-id]") as SVGElement | null)?.dataset.taskId ?? null;

/** The point of the SVG's own coordinates (the layout's) under a point of the screen. */
function inSvg(svg: SVGSVGElement, x: number, y: number): Point {
  const m = svg.getScreenCTM();
  if (!m) return { x, y };
  const p = new DOMPoint(x, y).matrixTransform(m.inverse());
  return { x: p.x, y: p.y };
}

export function useDragToConnect(svg: { current: SVGSVGElement | null }, enabled: boolean, onConnect: (from: string, to: string) => void) {
  const [line, setLine] = useState<DragLine | null>(null);
  /** Set when a drag ends, so the click the browser may send after it does not open the task. */
  const dragged = useRef(false);
  const stop = useRef<() => void>(() => {});
  useEffect(() => () => stop.current(), []);

  const onNodePointerDown = (e: PointerEvent, from: string, start: Point) => {
    if (!enabled || e.button !== 0 || e.pointerType === "touch" || !svg.current) return;
    const origin = { x: e.clientX, y: e.clientY };
    let dragging = false;
    dragged.current = false;
    const move = (m: PointerEvent) => {
      if (!dragging && Math.hypot(m.clientX - origin.x, m.clientY - origin.y) < DRAG_THRESHOLD) return;
      dragging = true;
      const over = taskUnder(m.clientX, m.clientY);
      setLine({ from, start, end: inSvg(svg.current!, m.clientX, m.clientY), over: over === from ? null : over });
    };
    const up = (u: PointerEvent) => {
      stop.current();
      if (!dragging) return;
      dragged.current = true;
      setLine(null);
      const to = taskUnder(u.clientX, u.clientY);
      if (to && to !== from) onConnect(from, to);
    };
    const cancel = () => {
      stop.current();
      setLine(null);
    };
    stop.current = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", cancel);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", cancel);
  };

  /** Whether a click comes at the end of a drag (and is then not a click); asking forgets it. */
  const endedDrag = () => {
    const was = dragged.current;
    dragged.current = false;
    return was;
  };
  return { line, onNodePointerDown, endedDrag };
}
