/**
 * Rows drawn only near the viewport, the page itself scrolling (@tanstack/virtual-core against the window): a long
 * table keeps a few dozen rows in the DOM whatever its length. `start` is where the rows begin in the document, so the
 * page's header and toolbars scroll by as usual above them.
 */
import { Virtualizer, measureElement, observeWindowOffset, observeWindowRect, windowScroll } from "@tanstack/virtual-core";
import { useLayoutEffect, useReducer, useState } from "preact/hooks";

export type WindowRows = Virtualizer<Window, HTMLTableRowElement>;

export function useWindowRows(props: { count: number; estimate: number; start: number; key: (index: number) => string; enabled: boolean }): WindowRows {
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const options = {
    count: props.enabled ? props.count : 0,
    getScrollElement: () => window,
    estimateSize: () => props.estimate,
    scrollToFn: windowScroll,
    observeElementRect: observeWindowRect,
    observeElementOffset: observeWindowOffset,
    measureElement,
    initialOffset: () => window.scrollY,
    scrollMargin: props.start,
    overscan: 12,
    getItemKey: props.key,
    onChange: () => redraw(undefined),
  };
  const [rows] = useState(() => new Virtualizer<Window, HTMLTableRowElement>(options));
  rows.setOptions(options);
  useLayoutEffect(() => rows._didMount(), []);
  useLayoutEffect(() => rows._willUpdate());
  return rows;
}
