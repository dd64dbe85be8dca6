/** Which event types a webhook is sent: all (the default), or those ticked, in a list that folds away. */
import { useEffect, useRef } from "preact/hooks";
import { EVENT_TYPES, type EventType } from "../event-types";

/** The chosen types, or null for all of them. */
export type EventChoice = EventType[] | null;

export const describeEvents = (events: EventChoice) =>
  events === null ? "all events" : events.length === 1 ? events[0]!.replaceAll("_", " ") : `${events.length} event types`;

export function EventPicker({ value, onChange }: { value: EventChoice; onChange: (events: EventChoice) => void }) {
  const box = useRef<HTMLDetailsElement>(null);
  // Folds away like a select: on a click elsewhere, or Escape.
  useEffect(() => {
    const outside = (e: MouseEvent) => {
      if (box.current?.open && !box.current.contains(e.target as Node)) box.current.open = false;
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || !box.current?.open) return;
      box.current.open = false;
      box.current.querySelector("summary")?.focus();
    };
    document.addEventListener("click", outside);
    document.addEventListener("keydown", escape);
    return () => {
      document.removeEventListener("click", outside);
      document.removeEventListener("keydown", escape);
    };
  }, []);
  const toggle = (type: EventType, on: boolean) => {
    const next = EVENT_TYPES.filter((t) => (t === type ? on : (value ?? []).includes(t)));
    // Nothing ticked means every type again, as the hub reads a missing list.
    onChange(next.length === 0 ? null : next);
  };
  return (
    <div class="event-picker">
      <span class="label" id="event-picker-label">
        Events
      </span>
      <details ref={box}>
        <summary aria-describedby="event-picker-label">{describeEvents(value)}</summary>
        <div class="event-options" role="group" aria-labelledby="event-picker-label">
          <label class="all">
            <input type="checkbox" checked={value === null} onChange={(e) => e.currentTarget.checked && onChange(null)} /> All events
          </label>
          {EVENT_TYPES.map((type) => (
            <label key={type}>
              <input type="checkbox" name="event-type" value={type} checked={value?.includes(type) ?? false} onChange={(e) => toggle(type, e.currentTarget.checked)} />{" "}
              {type.replaceAll("_", " ")}
            </label>
          ))}
        </div>
      </details>
    </div>
  );
}
