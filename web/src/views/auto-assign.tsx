/** A pending task's Auto-assign: greyed out, with the reason and where to fix it, when no server can take it now. */
import { ApiError, hub, ok } from "../api";
import { linkProps } from "../router";
import type { Match, Task } from "../types";
import { useAction } from "./controls";

/** At most this many servers' reasons are spelled out. */
const SHOWN = 3;

/** Why auto-assign cannot work now (null: it may), from the matching servers as read (null: not read yet). */
export function whyNot(matches: Match[] | null): string | null {
  if (matches === null) return null;
  if (matches.length === 0) return "No server serves this project yet: register one on the Agents page.";
  if (matches.some((m) => m.score >= 0)) return null;
  const each = matches.slice(0, SHOWN).map((m) => `${m.server_name} ${(m.reasons[0] ?? "cannot take it").replace(/ \(disqualified\)$/, "")}`);
  const more = matches.length > SHOWN ? `; and ${matches.length - SHOWN} more` : "";
  return `No server can take it now: ${each.join("; ")}${more}.`;
}

export function AutoAssign({ task, matches, onAssigned }: { task: Task; matches: Match[] | null; onAssigned: () => Promise<void> }) {
  const { run, busy, problem } = useAction();
  const reason = whyNot(matches);
  // The server to open to declare what it can do: the first one that cannot take it.
  const first = reason && matches?.[0];
  const assign = () =>
    run("auto", async () => {
      const answer = await ok(hub.POST("/api/v1/tasks/{id}/auto-assign", { params: { path: { id: task.id } } }));
      if (answer.status === "no_match") throw new ApiError(200, { detail: "No server can take it now: the matching servers below say why." });
      await onAssigned();
    });
  return (
    <span class="action auto-assign">
      <button type="button" disabled={busy !== null || reason !== null} aria-describedby={reason ? "auto-assign-why" : undefined} onClick={() => void assign()}>
        Auto-assign
      </button>
      {reason && (
        <span class="why-not muted" id="auto-assign-why">
          {reason}{" "}
          {first && (
            <a {...linkProps(`/servers/${first.server_id}`)} title="Its page shows what it declares; admins declare more there">
              Open {first.server_name}
            </a>
          )}
        </span>
      )}
      {problem("auto")}
    </span>
  );
}
