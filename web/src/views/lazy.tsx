/** Views that pull in a large library of their own, or are seldom the first page, load when first shown, keeping the first load small. */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";

/** A view loaded on first use; `what` names it to the person ("the graph"). */
export function lazy<P extends object>(load: () => Promise<ComponentType<P>>, what: string) {
  return function Lazy(props: P) {
    const [View, setView] = useState<ComponentType<P> | "failed" | null>(null);
    useEffect(() => void load().then((v) => setView(() => v), () => setView("failed")), []);
    if (View === "failed") return <p class="problem">{`${what[0]!.toUpperCase()}${what.slice(1)} could not be loaded (the hub may have been updated): reload the page.`}</p>;
    return View ? <View {...props} /> : <p class="loading">Loading {what}…</p>;
  };
}
