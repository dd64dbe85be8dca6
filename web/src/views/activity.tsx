/** A project's event feed: the latest from its log, then live. */
import { useEffect, useMemo, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useProject } from "../project-store";
import { linkProps } from "../router";
import { fromLog, type HubEvent } from "../types";
import { Empty, Failed, Loading } from "../ui/states";
import { absoluteTime } from "../time-format";
import { ProjectTabs } from "./project-tabs";

const HISTORY = 100;

export function Activity({ projectId }: { projectId: string }) {
  const state = useProject(projectId, HISTORY);
  const [history, setHistory] = useState<HubEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const head = state.project?.last_seq;

  const load = () => {
    if (head === undefined) return;
    void ok(
      hub.GET("/api/v1/projects/{id}/events", { params: { path: { id: projectId }, query: { since: String(Math.max(0, head - HISTORY)), limit: HISTORY } } }),
    ).then(
      (r) => (setHistory(r.events.map(fromLog).reverse()), setError(null)),
      (e) => setError(messageOf(e)),
    );
  };
  useEffect(load, [projectId, head]);

  const shown = useMemo(() => {
    const seen = new Set(state.events.map((e) => e.seq));
    return [...state.events, ...(history ?? []).filter((e) => !seen.has(e.seq))].slice(0, HISTORY * 2);
  }, [state.events, history]);
  const failure = error ?? state.error;

  return (
    <section>
      <ProjectTabs projectId={projectId} name={state.project?.name} current="activity" status={state.status} />
      {shown.length > 0 ? (
        <ol class="activity">
          {shown.map((e) => (
            <li key={e.seq} data-seq={e.seq}>
              <time dateTime={e.created_at}>{absoluteTime(e.created_at)}</time> <strong>{e.event_type.replaceAll("_", " ")}</strong>{" "}
              {e.task_id && <a {...linkProps(`/projects/${projectId}/tasks/${e.task_id}`)}>{state.tasks.get(e.task_id)?.title ?? e.task_id.slice(0, 8)}</a>}{" "}
              <span class="muted">by {e.actor}</span>
            </li>
          ))}
        </ol>
      ) : history === null ? (
        failure ? (
          <Failed what="the project's activity" message={failure} retry={head === undefined ? () => location.reload() : load} />
        ) : (
          <Loading what="activity" />
        )
      ) : (
        <Empty title="Nothing has happened yet.">Tasks created, assigned and finished show here as they happen.</Empty>
      )}
    </section>
  );
}
