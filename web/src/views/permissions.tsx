/**
 * A project's permission log, newest first: every tool call its agents' hooks decided, filtered by session, task, tool
 * and decision (kept in the address), paged back in time, and followed live: a `permission_logged` frame reads the
 * newest page again, or, while an older page is shown, counts the calls that came since.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useCanWrite } from "../me";
import { DECISIONS, filtersOf, mainParameter, ruleAndReason, ruleFromEntry, searchOf, type LogFilters, type PermissionEntry } from "../permission-entry";
import { useProjectFeed, useReread } from "../project-feed";
import { readAllTasks } from "../project-store";
import { linkProps, navigate } from "../router";
import type { Session, Task } from "../types";
import { Empty, Failed, Loading } from "../ui/states";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { absoluteTime } from "../time-format";

const PAGE = 50;
/** The feed's events are not needed here, only its `permission_logged` frames. */
const NO_EVENTS: ReadonlySet<string> = new Set();

export function Permissions({ projectId }: { projectId: string }) {
  const canWrite = useCanWrite();
  const search = location.search;
  const filters = filtersOf(search);
  const feed = useProjectFeed(projectId, NO_EVENTS);
  const [entries, setEntries] = useState<PermissionEntry[] | null>(null);
  /** What the latest read showed, for a live read to tell the new entries apart (a ref: reads land from older renders). */
  const shown = useRef<PermissionEntry[] | null>(null);
  const [nextBefore, setNextBefore] = useState<string | null>(null);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [waiting, setWaiting] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [sessions, setSessions] = useState<Session[]>([]);
  const [tasks, setTasks] = useState<Map<string, Task>>(new Map());
  const [ruleNames, setRuleNames] = useState<Map<string, string>>(new Map());

  const reread = useReread(
    () => ok(hub.GET("/api/v1/projects/{id}/permission-log", { params: { path: { id: projectId }, query: { ...filters, limit: PAGE } } })),
    (page) => {
      // Entries not shown before are marked as new, unless this is the first read of these filters.
      const known = shown.current && new Set(shown.current.map((e) => e.id));
      setFresh(new Set(known ? page.entries.filter((e) => !known.has(e.id)).map((e) => e.id) : []));
      shown.current = page.entries;
      setEntries(page.entries);
      setNextBefore(page.next_before);
      setError(null);
    },
    setError,
  );

  useEffect(() => {
    let live = true;
    const failed = (e: unknown) => live && setError(messageOf(e));
    void ok(hub.GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: { status: "all" } } })).then(
      (r) => live && setSessions(r.sessions),
      failed,
    );
    void readAllTasks(projectId).then((all) => live && setTasks(new Map(all.map((t) => [t.id, t]))), failed);
    // Rules the person cannot read are not listed: their entries show the rule's id.
    void ok(hub.GET("/api/v1/approval-rules")).then((r) => live && setRuleNames(new Map(r.rules.map((rule) => [rule.id, rule.name]))), failed);
    return () => {
      live = false;
    };
  }, [projectId]);

  useEffect(() => {
    setEntries(null);
    shown.current = null;
    setWaiting(0);
    reread(0);
  }, [projectId, search]);

  useEffect(() => {
    if (!feed.logged) return;
    if (filters.before) setWaiting((n) => n + feed.logged!.count);
    else reread();
  }, [feed.logged]);

  const show = (change: Partial<LogFilters>) => {
    const next: LogFilters = { ...filters, ...change };
    // Any new filter starts from the newest entries.
    if (!("before" in change)) delete next.before;
    navigate(`/projects/${projectId}/permissions${searchOf(next)}`);
  };

  return (
    <section class="permissions-page">
      <ProjectTabs projectId={projectId} name={feed.project?.name} current="permissions" status={feed.status} />
      <Problem message={feed.error ?? (entries ? error : null)} />
      <div class="filters">
        <label>
          Session
          <select name="session" value={filters.session_id ?? ""} onChange={(e) => show({ session_id: e.currentTarget.value })}>
            <option value="">all sessions</option>
            {sessions.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
        {/* Typed text is kept through the live updates until it is committed (Enter or leaving the field), which sets the address. */}
        <label>
          Task
          <input
            name="task"
            list="permission-tasks"
            placeholder="any task (id)"
            key={`task ${search}`}
            defaultValue={filters.task_id ?? ""}
            onChange={(e) => show({ task_id: e.currentTarget.value.trim() })}
          />
          <datalist id="permission-tasks">
            {[...tasks.values()].map((t) => (
              <option key={t.id} value={t.id}>
                {t.title}
              </option>
            ))}
          </datalist>
        </label>
        <label>
          Tool
          <input
            name="tool"
            placeholder="any tool (Bash, shell…)"
            key={`tool ${search}`}
            defaultValue={filters.tool ?? ""}
            onChange={(e) => show({ tool: e.currentTarget.value.trim() })}
          />
        </label>
        <label>
          Decision
          <select
            name="decision"
            value={filters.decision ?? ""}
            onChange={(e) => show({ decision: (e.currentTarget.value || undefined) as LogFilters["decision"] })}
          >
            <option value="">all decisions</option>
            {DECISIONS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <span class="muted" aria-live="polite">
          {entries && `${entries.length} ${entries.length === 1 ? "call" : "calls"}${filters.before ? " (older)" : ""}`}
        </span>
      </div>
      {filters.before && (
        <p class="pager">
          <a {...linkProps(`/projects/${projectId}/permissions${searchOf({ ...filters, before: undefined })}`)}>
            {waiting > 0
              ? // The room counts the project's new calls, not those the filters pick.
                `${waiting} new ${waiting === 1 ? "call" : "calls"}${Object.keys(filters).some((k) => k !== "before") ? " in the project" : ""} — show the newest`
              : "Newest calls"}
          </a>
        </p>
      )}
      {entries === null && (error ? <Failed what="the permission log" message={error} retry={() => reread(0)} /> : <Loading what="the log" />)}
      {entries && entries.length > 0 && (
        <ol class="permission-log" data-loaded="true">
          {entries.map((e) => (
            <LogEntry
              key={e.id}
              projectId={projectId}
              entry={e}
              fresh={fresh.has(e.id)}
              task={e.task_id ? tasks.get(e.task_id) : undefined}
              ruleName={e.matched_rule_id ? ruleNames.get(e.matched_rule_id) : undefined}
              canWrite={canWrite}
            />
          ))}
        </ol>
      )}
      {entries?.length === 0 && (
        <Empty
          title={searchOf({ ...filters, before: undefined }) ? "No logged call matches these filters." : "No tool call has been logged in this project yet."}
        >
          Calls appear here as the agents' hooks decide them.
        </Empty>
      )}
      {nextBefore && (
        <p class="pager">
          <button type="button" class="secondary" onClick={() => show({ before: nextBefore })}>
            Older
          </button>
        </p>
      )}
    </section>
  );
}

function LogEntry(props: { projectId: string; entry: PermissionEntry; fresh: boolean; task?: Task; ruleName?: string; canWrite: boolean }) {
  const e = props.entry;
  const [open, setOpen] = useState(false);
  const param = mainParameter(e.tool_name, e.tool_input);
  const said = ruleAndReason(e.reason, !!e.matched_rule_id);
  return (
    <li class={`permission-entry${props.fresh ? " fresh" : ""}`} data-entry-id={e.id} data-decision={e.decision}>
      <div class="entry-head">
        <span class={`badge decision decision-${e.decision}`}>{e.decision}</span>
        <code class="tool">{e.tool_name}</code>
        {param && <code class="param">{param}</code>}
        <time class="muted" dateTime={e.created_at}>
          {absoluteTime(e.created_at)}
        </time>
      </div>
      <div class="entry-meta small">
        <span class="session">{e.session_name ?? <span class="muted">{e.session_id ? "ended session" : "no session"}</span>}</span>
        {e.task_id && (
          <>
            {" · "}
            <a class="task" {...linkProps(`/projects/${props.projectId}/tasks/${e.task_id}`)}>
              {props.task?.title ?? e.task_id}
            </a>
          </>
        )}
        {" · "}
        <span class="agent">{e.agent_name ?? <span class="muted">unknown agent</span>}</span>
        {" · "}
        <span class="rule">
          {e.matched_rule_id ? (
            <>
              {said.ruleLead} <strong>{props.ruleName ?? <code>{e.matched_rule_id}</code>}</strong>
            </>
          ) : (
            <span class="muted">no rule matched</span>
          )}
        </span>
        {said.reason && (
          <>
            {" · "}
            <span class="reason">{said.reason}</span>
          </>
        )}
      </div>
      <div class="entry-actions small">
        <button type="button" class="link small" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "hide tool input" : "tool input"}
        </button>
        {props.canWrite && (
          <a class="make-rule" {...linkProps(ruleFromEntry(props.projectId, e))}>
            Make a rule from this
          </a>
        )}
      </div>
      {open && (
        <div class="tool-input">
          {e.tool_input_truncated && <p class="muted small truncated">Long strings of this input were cut when it was logged.</p>}
          <pre>{JSON.stringify(e.tool_input, null, 2)}</pre>
        </div>
      )}
    </li>
  );
}
