/**
 * A project's runs, newest first, a page at a time (`before` the last one shown): what started each, its template and
 * parameters, its status read from its tasks (or why it made none), and links to those tasks. Filtered by the page's
 * query (`template_id`, `schedule_id`, `trigger_id`), which each template, schedule and trigger links to.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { listRuns, RUNS_PAGE, type Run, type RunFilter } from "../automation-api";
import { linkProps } from "../router";
import { absoluteTime } from "../time-format";
import { tasksOf, type HubEvent } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { Problem } from "./controls";

export const filterOf = (search: string): RunFilter => {
  const q = new URLSearchParams(search);
  const pick = (k: keyof RunFilter) => (q.get(k) ? { [k]: q.get(k)! } : {});
  return { ...pick("template_id"), ...pick("schedule_id"), ...pick("trigger_id") };
};

const SKIPPED: Record<string, string> = {
  missed: "the slot was missed (the hub woke too late) and the schedule skips missed slots",
  overlap: "the previous run's graph was still open and the schedule skips overlaps",
};

export function RunStatus({ run }: { run: Run }) {
  const why = run.skipped ? (SKIPPED[run.skipped] ?? run.skipped) : null;
  return (
    <span class="run-status">
      <span class={`status run-${run.status}`} data-status={run.status}>
        {run.status}
      </span>
      {why ? (
        <span class="muted small">{why}</span>
      ) : (
        <span class="muted small">
          {run.tasks.done} of {run.tasks.total} done{run.tasks.failed ? `, ${run.tasks.failed} failed` : ""}
        </span>
      )}
    </span>
  );
}

/** The parameters a run was given, `name = value` each. */
export const ParameterList = ({ values }: { values: Record<string, unknown> }) => {
  const entries = Object.entries(values);
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <span class="param-names">
      {entries.map(([k, v]) => (
        <code key={k}>
          {k} = {JSON.stringify(v)}
        </code>
      ))}
    </span>
  );
};

/** The titles of these tasks, read when one is not known yet. */
function useTitles(projectId: string, ids: string[]): Map<string, string> {
  const [titles, setTitles] = useState<Map<string, string>>(new Map());
  const missing = [...new Set(ids)].filter((id) => !titles.has(id)).slice(0, 200);
  useEffect(() => {
    if (missing.length === 0) return;
    let live = true;
    void ok(hub.GET("/api/v1/tasks", { params: { query: { project_id: projectId, ids: missing.join(","), limit: missing.length } } })).then(
      (page) =>
        live && setTitles((known) => new Map([...known, ...missing.map((id) => [id, ""] as const), ...tasksOf(page).map((t) => [t.id, t.title] as const)])),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [projectId, missing.join(",")]);
  return titles;
}

export function Runs(props: {
  projectId: string;
  latest: HubEvent[];
  names: { templates: Map<string, string>; schedules: Map<string, string>; triggers: Map<string, string> };
}) {
  const { projectId } = props;
  const filter = filterOf(location.search);
  const key = JSON.stringify(filter);
  const [runs, setRuns] = useState<Run[] | null>(null);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const titles = useTitles(
    projectId,
    (runs ?? []).flatMap((r) => r.task_ids),
  );

  /** The first page again (a new run, or a task of one finishing, changes it). */
  const first = () =>
    void listRuns(projectId, filter).then(
      (page) => {
        // Older pages already shown stay, below the first page as it now is.
        const last = page[page.length - 1];
        setRuns((shown) => (page.length < RUNS_PAGE || !shown || !last ? page : [...page, ...shown.filter((r) => r.started_at < last.started_at)]));
        setMore((had) => page.length === RUNS_PAGE && had);
        setError(null);
      },
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    setRuns(null);
    setMore(true);
    first();
  }, [projectId, key]);
  useEffect(() => {
    if (props.latest.length) first();
  }, [props.latest]);
  const older = () => {
    const last = runs?.[runs.length - 1];
    if (!last) return;
    setLoadingMore(true);
    void listRuns(projectId, filter, last.id)
      .then(
        (page) => {
          setRuns((shown) => [...(shown ?? []), ...page]);
          setMore(page.length === RUNS_PAGE);
        },
        (e) => setError(messageOf(e)),
      )
      .finally(() => setLoadingMore(false));
  };

  const base = `/projects/${projectId}/automation`;
  const { templates, schedules, triggers } = props.names;
  const filtered = filter.template_id
    ? `of the template ${templates.get(filter.template_id) ?? "…"}`
    : filter.schedule_id
      ? `of the schedule ${schedules.get(filter.schedule_id) ?? "…"}`
      : filter.trigger_id
        ? `of the trigger ${triggers.get(filter.trigger_id) ?? "…"}`
        : null;
  const source = (r: Run) =>
    r.schedule_id ? (
      <a {...linkProps(`${base}/runs?schedule_id=${r.schedule_id}`)}>schedule {schedules.get(r.schedule_id) ?? ""}</a>
    ) : r.trigger_id ? (
      <a {...linkProps(`${base}/runs?trigger_id=${r.trigger_id}`)}>trigger {triggers.get(r.trigger_id) ?? ""}</a>
    ) : (
      <span>
        {r.source} <span class="muted small">by {r.created_by}</span>
      </span>
    );

  return (
    <section class="automation-section" aria-labelledby="runs-title">
      <div class="section-head">
        <h2 id="runs-title">Runs{filtered ? ` ${filtered}` : ""}</h2>
        {filtered && <a {...linkProps(`${base}/runs`)}>All runs</a>}
      </div>
      {runs !== null && <Problem message={error} />}
      {runs === null ? (
        error ? (
          <Failed what="the runs" message={error} retry={first} />
        ) : (
          <Loading what="runs" />
        )
      ) : runs.length === 0 ? (
        <Empty title="No runs yet.">Each run of a template (by hand, by a schedule or by a trigger) is listed here with its tasks.</Empty>
      ) : (
        <DataTable
          class="runs"
          label="Runs"
          rows={runs}
          rowKey={(r) => r.id}
          rowAttributes={(r) => ({ "data-run-id": r.id, "data-status": r.status })}
          columns={[
            { label: "Started", rowHeader: true, cell: (r) => <time dateTime={r.started_at}>{absoluteTime(r.started_at)}</time> },
            { label: "Source", cell: source },
            {
              label: "Template",
              cell: (r) =>
                r.template_id ? <a {...linkProps(`${base}/runs?template_id=${r.template_id}`)}>{r.template_name}</a> : <span>{r.template_name} (deleted)</span>,
            },
            { label: "Parameters", cell: (r) => <ParameterList values={r.parameters} /> },
            { label: "Status", cell: (r) => <RunStatus run={r} /> },
            {
              label: "Tasks",
              cell: (r) =>
                r.task_ids.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="run-tasks">
                    {r.task_ids.map((id) => (
                      <li key={id}>
                        <a {...linkProps(`/projects/${projectId}/tasks/${id}`)}>{titles.get(id) || `task ${id.slice(0, 8)}`}</a>
                      </li>
                    ))}
                  </ul>
                ),
            },
          ]}
        />
      )}
      {more && (
        <button type="button" class="secondary" disabled={loadingMore} aria-busy={loadingMore} onClick={older}>
          Older runs
        </button>
      )}
    </section>
  );
}
