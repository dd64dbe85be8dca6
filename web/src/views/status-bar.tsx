/** A project's unfinished tasks as one thin bar split by status, with its legend: the state of the work at a glance. */
import type { Schemas } from "../../../client";

export type OpenByStatus = Schemas["ProjectAtAGlance"]["open_by_status"];

/** In the order work moves through them. */
export const OPEN_STATUSES = ["pending", "assigned", "planning", "plan_review", "running", "needs_human"] as const;
export const statusLabel = (s: string) => s.replaceAll("_", " ");

export function StatusBar({ counts, legend = true }: { counts: OpenByStatus; legend?: boolean }) {
  const shown = OPEN_STATUSES.filter((s) => counts[s] > 0);
  const total = shown.reduce((n, s) => n + counts[s], 0);
  const said = total === 0 ? "No open tasks" : `Open tasks: ${shown.map((s) => `${counts[s]} ${statusLabel(s)}`).join(", ")}`;
  return (
    <div class="status-bar-wrap">
      <div class="status-bar" role="img" aria-label={said}>
        {shown.map((s) => (
          <span key={s} class={`status-seg seg-${s}`} style={{ flexGrow: counts[s] }} title={`${counts[s]} ${statusLabel(s)}`} />
        ))}
      </div>
      {legend && shown.length > 0 && (
        <ul class="status-legend" aria-hidden="true">
          {shown.map((s) => (
            <li key={s}>
              <span class={`status-dot seg-${s}`} />
              {counts[s]} {statusLabel(s)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
