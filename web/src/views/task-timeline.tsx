/** A task's timeline: each event, with the questions asked and the answers given in full; and how long it waited, planned and ran. */
import { formatDuration, phaseDurations, type Phase } from "../task-durations";
import type { HubEvent, Task } from "../types";
import { Section } from "./task-sections";
import { absoluteTime } from "../time-format";

const text = (v: unknown) => (typeof v === "string" && v.trim() ? v : null);

export function Timeline({ events }: { events: HubEvent[] }) {
  return (
    <Section title="Timeline">
      <ol class="timeline">
        {events.map((e) => {
          const question = e.event_type === "intervention_requested" ? text(e.data.question) : null;
          const answer = e.event_type === "intervention_responded" ? text(e.data.response) : null;
          return (
            <li key={e.seq} data-event={e.event_type}>
              <time dateTime={e.created_at}>{absoluteTime(e.created_at)}</time> <strong>{e.event_type.replaceAll("_", " ")}</strong>{" "}
              <span class="muted">by {e.actor}</span>
              {question && (
                <blockquote class="asked">
                  <span class="label">{text(e.data.intervention_type) ?? "question"}:</span> {question}
                </blockquote>
              )}
              {answer && (
                <blockquote class="answered">
                  <span class="label">answer:</span> {answer}
                </blockquote>
              )}
            </li>
          );
        })}
      </ol>
    </Section>
  );
}

const PHASES: { phase: Phase; label: string }[] = [
  { phase: "waited", label: "waited" },
  { phase: "planned", label: "planned" },
  { phase: "ran", label: "ran" },
  { phase: "held", label: "waited for a person" },
];

/** How long the task spent waiting, planning, running and held for a person (the phases it has been through). */
export function PhaseTimes({ task, events }: { task: Task; events: HubEvent[] }) {
  const spent = phaseDurations(task.created_at, events);
  const shown = PHASES.filter(({ phase }) => spent[phase] > 0 || phase === "waited");
  return (
    <p class="phase-times" aria-label="Time spent">
      {shown.map(({ phase, label }, i) => (
        <span key={phase} data-phase={phase}>
          {i > 0 && " · "}
          {i === 0 ? label[0]!.toUpperCase() + label.slice(1) : label} <strong>{formatDuration(spent[phase])}</strong>
        </span>
      ))}
    </p>
  );
}
