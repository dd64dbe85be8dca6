/**
 * A project at a glance: tiles for what is open, waiting and failing; small charts of its last days (done, failed and
 * retried, spend against budget); time to done by type; who is at work; code health; and what happened last. One read
 * of the hub's roll-ups (GET /projects/{id}/overview), again when the period changes.
 */
import { useEffect, useState } from "preact/hooks";
import type { Schemas } from "../../../client";
import { hub, messageOf, ok } from "../api";
import { linkProps } from "../router";
import { formatDuration } from "../task-durations";
import { Empty, Failed, Loading } from "../ui/states";
import { usd } from "../usage-format";
import { DayChart } from "../ui/day-chart";
import { ProjectTabs } from "./project-tabs";
import { adoptStyles } from "../adopt-styles";
import { StatusBar } from "./status-bar";
import pageCss from "./overview-page.css" with { type: "text" };
import { absoluteTime } from "../time-format";

adoptStyles(pageCss as string);

type Overview = Schemas["ProjectOverview"];
type Budget = Overview["budgets"][number];

const PERIODS = [7, 14, 30, 90] as const;
const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
/** "Nov 26, 14:05": a date with every time, as the page may show days back. */
const when = (iso: string) => absoluteTime(iso);

export function ProjectOverview({ projectId }: { projectId: string }) {
  const [days, setDays] = useState<number>(14);
  const [overview, setOverview] = useState<Overview | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const read = () => {
    setFailed(null);
    void ok(hub.GET("/api/v1/projects/{id}/overview", { params: { path: { id: projectId }, query: { days } } })).then(setOverview, (e) =>
      setFailed(messageOf(e)),
    );
  };
  useEffect(read, [projectId, days]);

  return (
    <section class="project-overview">
      <ProjectTabs projectId={projectId} current="overview" />
      <div class="overview-head">
        <h2>Last {days} days</h2>
        <label>
          Period{" "}
          <select value={days} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {PERIODS.map((d) => (
              <option key={d} value={d}>
                {d} days
              </option>
            ))}
          </select>
        </label>
      </div>
      {failed ? (
        <Failed what="the overview" message={failed} retry={read} />
      ) : overview === null || overview.project_id !== projectId ? (
        <Loading what="the overview" />
      ) : (
        <OverviewBody projectId={projectId} o={overview} />
      )}
    </section>
  );
}

function Tile(props: { name: string; label: string; value: string | number; note?: string; href?: string }) {
  return (
    <div class="tile">
      <span class="tile-label">{props.label}</span>
      {props.href ? (
        <a class="tile-value" data-stat={props.name} {...linkProps(props.href)}>
          {props.value}
        </a>
      ) : (
        <span class="tile-value" data-stat={props.name}>
          {props.value}
        </span>
      )}
      {props.note && <span class="tile-note">{props.note}</span>}
    </div>
  );
}

function OverviewBody({ projectId, o }: { projectId: string; o: Overview }) {
  const base = `/projects/${projectId}`;
  const dayList = o.days.map((d) => d.day);
  const today = o.days.at(-1)!;
  const spent = o.days.reduce((n, d) => n + d.spend_usd, 0);
  const dailyLimit = o.budgets.find((b) => b.scope === "project" && b.period === "day" && b.limit_usd !== null)?.limit_usd ?? undefined;
  return (
    <>
      <div class="tiles">
        <Tile name="open_tasks" label="Open tasks" value={o.open_tasks} href={`${base}/board`} />
        <Tile name="questions_waiting" label="Waiting on people" value={o.questions_waiting} href="/inbox" note="questions, plans, approvals" />
        <Tile name="agents_online" label="Agents online" value={o.agents.length} href={`${base}/sessions`} />
        <Tile name="done" label="Done" value={o.totals.done} note={`${today.done} today`} />
        <Tile name="failed" label="Failed" value={o.totals.failed} note={`${today.failed} today`} />
        <Tile name="failure_rate" label="Failure rate" value={percent(o.failure_rate)} note="of finished tasks" />
        <Tile name="retry_rate" label="Retry rate" value={percent(o.retry_rate)} note={`${o.totals.retried} ${o.totals.retried === 1 ? "retry" : "retries"}`} />
        <Tile
          name="code_health"
          label="Code health"
          value={o.code_health ? `${o.code_health.health_score} ${o.code_health.health_grade}` : "—"}
          href={`${base}/code-health`}
          note={o.code_health ? `scanned ${when(o.code_health.received_at)}` : "no scan yet"}
        />
        <Tile name="spend" label="Spend" value={usd(spent)} note={`${usd(today.spend_usd)} today`} href={`${base}/usage`} />
      </div>
      <div class="panels">
        <div class="panel">
          <h3>Open tasks by status</h3>
          {o.open_tasks === 0 ? <p class="muted">Nothing open.</p> : <StatusBar counts={o.open_by_status} />}
          <OpenQuestions projectId={projectId} o={o} />
        </div>
        <div class="panel">
          <h3>Throughput: tasks done per day</h3>
          <DayChart label="Tasks done per day" days={dayList} series={[{ label: "Done", values: o.days.map((d) => d.done), colour: "--ok", kind: "bars" }]} />
        </div>
        <div class="panel">
          <h3>Failures and retries per day</h3>
          <DayChart
            label="Failures and retries per day"
            days={dayList}
            series={[
              { label: "Failed", values: o.days.map((d) => d.failed), colour: "--danger", kind: "bars" },
              { label: "Retried", values: o.days.map((d) => d.retried), colour: "--warn", kind: "line" },
            ]}
          />
          <p class="chart-legend">
            <span>
              <span class="swatch swatch-failed" />
              Failed
            </span>
            <span>
              <span class="swatch swatch-retried" />
              Retried
            </span>
          </p>
        </div>
        <div class="panel">
          <h3>Spend per day{dailyLimit !== undefined ? " against the daily budget" : ""}</h3>
          <DayChart
            label="Spend per day"
            days={dayList}
            format={usd}
            series={[{ label: "Spend", values: o.days.map((d) => d.spend_usd), colour: "--accent", kind: "bars" }]}
            limit={dailyLimit !== undefined ? { value: dailyLimit, label: "Daily budget" } : undefined}
          />
          <Budgets budgets={o.budgets} base={base} />
        </div>
        <div class="panel">
          <h3>Median time to done, by type</h3>
          {o.by_type.length === 0 ? (
            <p class="muted">No task finished in the period.</p>
          ) : (
            <div class="table-scroll" tabIndex={0} role="region" aria-label="Median time to done, by type">
              <table class="data by-type">
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Done</th>
                    <th scope="col">Failed</th>
                    <th scope="col">Median to done</th>
                  </tr>
                </thead>
                <tbody>
                  {o.by_type.map((t) => (
                    <tr key={t.type} data-type={t.type}>
                      <td>{t.type}</td>
                      <td>{t.done}</td>
                      <td>{t.failed}</td>
                      <td>{t.median_seconds_to_done === null ? "—" : `≈ ${formatDuration(t.median_seconds_to_done * 1000)}`}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
        <div class="panel">
          <h3>Agents online and their load</h3>
          <Agents o={o} />
        </div>
        <div class="panel">
          <h3>Recent activity</h3>
          <RecentActivity projectId={projectId} o={o} />
        </div>
      </div>
    </>
  );
}

function OpenQuestions({ projectId, o }: { projectId: string; o: Overview }) {
  const waiting = [
    { n: o.open_by_status.needs_human, what: ["needs an answer", "need an answer"] },
    { n: o.open_by_status.plan_review, what: ["has a plan to review", "have a plan to review"] },
  ].filter((w) => w.n > 0);
  if (o.questions_waiting === 0) return <p class="muted">Nothing waits on people.</p>;
  return (
    <p class="open-questions">
      <a {...linkProps("/inbox")}>{o.questions_waiting} waiting on people in the inbox</a>
      {waiting.length > 0 && (
        <>
          {": "}
          {waiting.map((w, i) => (
            <span key={w.what[1]}>
              {i > 0 && ", "}
              {w.n === 1 ? `1 task ${w.what[0]}` : `${w.n} tasks ${w.what[1]}`}
            </span>
          ))}{" "}
          (<a {...linkProps(`/projects/${projectId}/board`)}>board</a>)
        </>
      )}
    </p>
  );
}

function Budgets({ budgets, base }: { budgets: Budget[]; base: string }) {
  const shown = budgets.filter((b) => b.scope === "project");
  if (shown.length === 0)
    return (
      <p class="muted">
        No project budget. <a {...linkProps(`${base}/usage`)}>Set one on the Usage page</a>.
      </p>
    );
  return (
    <div>
      {shown.map((b) => (
        <div class="budget-line" key={b.id}>
          <div class="budget-words">
            <span>This {b.period}</span>
            <span>
              {b.limit_usd !== null ? `${usd(b.spent.cost_usd)} of ${usd(b.limit_usd)}` : `${b.spent.tokens} of ${b.limit_tokens} tokens`} (
              {Math.round(b.percent)}%)
            </span>
          </div>
          <div class={`meter${b.percent >= 100 ? " over" : ""}`} role="img" aria-label={`Budget this ${b.period}: ${Math.round(b.percent)}% spent`}>
            <span style={{ width: `${Math.min(100, b.percent)}%` }} />
          </div>
        </div>
      ))}
    </div>
  );
}

function Agents({ o }: { o: Overview }) {
  if (o.agents.length === 0) return <Empty title="No agent is online here." />;
  const most = Math.max(1, ...o.agents.map((a) => a.running_tasks));
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label="Agents and their load">
      <table class="data agents-load">
        <thead>
          <tr>
            <th scope="col">Server</th>
            <th scope="col">Sessions</th>
            <th scope="col">Running tasks</th>
          </tr>
        </thead>
        <tbody>
          {o.agents.map((a) => (
            <tr key={a.server_id} data-server-id={a.server_id}>
              <td>
                <a {...linkProps(`/servers/${a.server_id}`)}>{a.server_name}</a>
              </td>
              <td>{a.sessions}</td>
              <td>
                {a.running_tasks} <span class="load-bar" style={{ width: `${(a.running_tasks / most) * 4}rem` }} aria-hidden="true" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RecentActivity({ projectId, o }: { projectId: string; o: Overview }) {
  if (o.recent_events.length === 0) return <p class="muted">Nothing has happened yet.</p>;
  // Events that name their task's title (created, assigned, …) name it for the others of the same task in the list.
  const titles = new Map<string, string>();
  for (const e of o.recent_events) {
    const named = (e.data as { title?: unknown } | null)?.title;
    if (e.task_id && typeof named === "string") titles.set(e.task_id, named);
  }
  return (
    <>
      <ol class="recent-events">
        {o.recent_events.map((e) => {
          const title = e.task_id ? (titles.get(e.task_id) ?? e.task_id.slice(0, 8)) : null;
          return (
            <li key={e.seq}>
              <time dateTime={e.created_at}>{when(e.created_at)}</time>
              <span class="what">
                {e.type.replaceAll("_", " ")} {e.task_id && <a {...linkProps(`/projects/${projectId}/tasks/${e.task_id}`)}>{title}</a>}
              </span>
            </li>
          );
        })}
      </ol>
      <p>
        <a {...linkProps(`/projects/${projectId}/activity`)}>All activity</a>
      </p>
    </>
  );
}
