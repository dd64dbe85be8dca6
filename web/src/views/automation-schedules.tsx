/**
 * A project's schedules: each with its cron in words, its time zone, its next runs (in the person's own time), its
 * policies and whether it is paused; for members and admins, the form that sets one up or changes it, pause and resume,
 * and delete. Read again as schedules change and runs start.
 */
import { useState } from "preact/hooks";
import { changeSchedule, deleteSchedule, listSchedules, listTemplates, NO_EVENTS, type Schedule } from "../automation-api";
import { useCanWrite } from "../me";
import { linkProps } from "../router";
import { absoluteTime } from "../time-format";
import type { HubEvent } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useLiveRead } from "../usage-reads";
import { Problem, useAction } from "./controls";
import { CronWords } from "./cron-words";
import { ScheduleForm } from "./schedule-form";

const MISSED = { skip: "skip a missed slot", run_once: "run a missed slot once" } as const;
const OVERLAP = { skip: "skip while the last run is open", allow: "run even while the last run is open" } as const;

/** The next slots, in the person's time zone. */
export function NextRuns({ schedule: s }: { schedule: Schedule }) {
  if (s.paused) return <span class="muted">none while paused</span>;
  if (s.next_runs.length === 0) return <span class="muted">none</span>;
  return (
    <ol class="next-runs">
      {s.next_runs.map((at) => (
        <li key={at}>
          <time dateTime={at}>{absoluteTime(at)}</time>
        </li>
      ))}
    </ol>
  );
}

export function Schedules({ projectId, latest }: { projectId: string; latest: HubEvent[] }) {
  const canWrite = useCanWrite();
  const schedules = useLiveRead(() => listSchedules(projectId), [projectId], latest);
  const templates = useLiveRead(() => listTemplates(projectId), [projectId], NO_EVENTS);
  /** The form: closed, a new schedule, or the schedule being changed. */
  const [editing, setEditing] = useState<Schedule | "new" | null>(null);
  const [saved, setSaved] = useState<Schedule | null>(null);
  const { run, busy, problem } = useAction();
  const list = schedules.value;
  const templateName = (id: string) => templates.value?.find((t) => t.id === id)?.name ?? "…";

  const pause = (s: Schedule) =>
    void run(`pause-${s.id}`, async () => {
      await changeSchedule(projectId, s.id, { paused: !s.paused });
      toast(s.paused ? "Resumed the schedule: it runs from its next slot." : "Paused the schedule: it runs nothing until resumed.");
      schedules.reread();
    });
  const remove = (s: Schedule) =>
    confirm(`Delete the schedule ${s.name ?? s.cron}? It runs no more; its runs and their tasks stay.`) &&
    void run(`delete-${s.id}`, async () => {
      await deleteSchedule(projectId, s.id);
      toast("Deleted the schedule.");
      if (saved?.id === s.id) setSaved(null);
      schedules.reread();
    });

  return (
    <section class="automation-section" aria-labelledby="schedules-title">
      <div class="section-head">
        <h2 id="schedules-title">Schedules</h2>
        {canWrite && editing === null && (
          <button type="button" disabled={templates.value?.length === 0} onClick={() => setEditing("new")}>
            New schedule
          </button>
        )}
      </div>
      <p class="muted">
        A schedule runs a template at the times its cron expression names, in its time zone. Times here are in yours.
        {canWrite && templates.value?.length === 0 && " Make a template first: a schedule runs one."}
      </p>
      {editing !== null && templates.value && (
        <ScheduleForm
          key={editing === "new" ? "new" : editing.id}
          projectId={projectId}
          templates={templates.value}
          schedule={editing === "new" ? undefined : editing}
          onCancel={() => setEditing(null)}
          onSaved={(s) => {
            setEditing(null);
            setSaved(s);
            schedules.reread();
          }}
        />
      )}
      {saved && (
        <div class="panel schedule-saved" role="status" data-schedule-id={saved.id}>
          <p>
            Saved the schedule {saved.name ?? templateName(saved.template_id)}: <CronWords expression={saved.cron} /> ({saved.timezone}).
          </p>
          <div class="saved-next-runs">
            Its next runs, in your time: <NextRuns schedule={saved} />
          </div>
          <button type="button" class="secondary" onClick={() => setSaved(null)}>
            Done
          </button>
        </div>
      )}
      {list !== null && <Problem message={schedules.error} />}
      {list === null ? (
        schedules.error ? (
          <Failed what="the schedules" message={schedules.error} retry={schedules.reread} />
        ) : (
          <Loading what="schedules" />
        )
      ) : list.length === 0 ? (
        <Empty title="No schedules yet.">A schedule runs a template nightly, weekly, or at whatever times its cron expression names.</Empty>
      ) : (
        <DataTable
          class="schedules"
          label="Schedules"
          rows={list}
          rowKey={(s) => s.id}
          rowAttributes={(s) => ({ "data-schedule-id": s.id, "data-paused": String(s.paused) })}
          columns={[
            {
              label: "Schedule",
              rowHeader: true,
              cell: (s) => (
                <span class="stack">
                  <span>{s.name ?? templateName(s.template_id)}</span>
                  <code>{s.cron}</code>
                  <span class="muted small">
                    <CronWords expression={s.cron} />
                  </span>
                </span>
              ),
            },
            { label: "Template", cell: (s) => templateName(s.template_id) },
            { label: "Time zone", cell: (s) => s.timezone },
            { label: "Next runs", cell: (s) => <NextRuns schedule={s} /> },
            {
              label: "Policies",
              cell: (s) => (
                <span class="stack small">
                  <span>{MISSED[s.missed]}</span>
                  <span>{OVERLAP[s.overlap]}</span>
                </span>
              ),
            },
            {
              label: "State",
              cell: (s) => (
                <span class="stack">
                  <span class={`status ${s.paused ? "paused" : "status-done"}`}>{s.paused ? "paused" : "active"}</span>
                  {s.last_slot && <span class="muted small">last slot {absoluteTime(s.last_slot)}</span>}
                </span>
              ),
            },
            {
              label: "Actions",
              actions: true,
              cell: (s) => (
                <span class="row-actions">
                  {canWrite && (
                    <button type="button" class="secondary" disabled={busy !== null} onClick={() => pause(s)}>
                      {s.paused ? "Resume" : "Pause"}
                    </button>
                  )}
                  {canWrite && (
                    <button type="button" class="secondary" onClick={() => setEditing(s)}>
                      Edit
                    </button>
                  )}
                  <a class="button secondary" {...linkProps(`/projects/${projectId}/automation/runs?schedule_id=${s.id}`)}>
                    Runs
                  </a>
                  {canWrite && (
                    <button type="button" class="danger" disabled={busy !== null} onClick={() => remove(s)}>
                      Delete
                    </button>
                  )}
                  {problem(`pause-${s.id}`)}
                  {problem(`delete-${s.id}`)}
                </span>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
