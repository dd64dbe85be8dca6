/** Short confirmations and failures of what the person just did, shown for a few seconds in a corner (a live region). */
import { useEffect, useState } from "preact/hooks";

export type Toast = { id: number; text: string; tone: "ok" | "error" };

const SHOWN_MS = 5000;
let toasts: Toast[] = [];
let nextId = 0;
const listeners = new Set<(t: Toast[]) => void>();

function publish(next: Toast[]) {
  toasts = next;
  listeners.forEach((l) => l(toasts));
}

export function toast(text: string, tone: Toast["tone"] = "ok") {
  const id = ++nextId;
  publish([...toasts, { id, text, tone }].slice(-4));
  setTimeout(() => publish(toasts.filter((t) => t.id !== id)), SHOWN_MS);
}

export function Toasts() {
  const [shown, setShown] = useState(toasts);
  useEffect(() => {
    listeners.add(setShown);
    return () => void listeners.delete(setShown);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {shown.map((t) => (
        <p key={t.id} class={`toast toast-${t.tone}`}>
          {t.text}
        </p>
      ))}
    </div>
  );
}
