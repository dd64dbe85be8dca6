/**
 * A vertical virtual list for Preact on @tanstack/virtual-core: only the rows in view (and a few either side) are in
 * the page, each measured as drawn, so a column of 1,000 cards scrolls as lightly as one of 20.
 */
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core";
import { useLayoutEffect, useReducer, useState } from "preact/hooks";

interface Options {
  count: number;
  getScrollElement: () => HTMLElement | null;
  estimateSize: number;
  getItemKey: (index: number) => string;
  overscan?: number;
  gap?: number;
}

export function useVirtualList(options: Options): Virtualizer<HTMLElement, HTMLElement> {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const resolved = {
    count: options.count,
    getScrollElement: options.getScrollElement,
    estimateSize: () => options.estimateSize,
    getItemKey: options.getItemKey,
    overscan: options.overscan ?? 8,
    gap: options.gap ?? 0,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    onChange: () => redraw(0),
  };
  const [list] = useState(() => new Virtualizer<HTMLElement, HTMLElement>(resolved));
  list.setOptions(resolved);
  useLayoutEffect(() => list._didMount(), []);
  useLayoutEffect(() => list._willUpdate());
  return list;
}
