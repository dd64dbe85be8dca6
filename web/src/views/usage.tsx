/**
 * A project's Usage page: what its agents cost over the last 7, 30 or 90 days (UTC days), in all, per day (a uPlot
 * chart), per model, per agent and per task; and its budgets with what they have spent. Usage batches arriving on the
 * project's feed read the page again, so it stays current while agents work.
 */
import { useState } from "preact/hooks";
import { adoptStyles } from "../adopt-styles";
import { useProjectFeed } from "../project-feed";
import { linkProps } from "../router";
import { apiTime, exactTokens, hasUsage, tokens, usd, type Usage } from "../usage-format";
import { PERIODS, periodOf, rangeOf, readUsage, useLiveRead, USAGE_EVENTS, type Period, type UsageReport } from "../usage-reads";
import { Budgets } from "./budgets";
import { Failed, Loading } from "../ui/states";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { CostChart } from "./usage-chart";
import { AgentTable, ModelTable, TaskTable } from "./usage-tables";
import pageCss from "./usage-page.css" with { type: "text" };

// Applied once, when the page's chunk first loads (before it first renders), and kept: its rules name only this page's elements.
adoptStyles(pageCss as string);

export function UsagePage({ projectId }: { projectId: string }) {
  const feed = useProjectFeed(projectId, USAGE_EVENTS);
  const [days, setDays] = useState<Period>(() => periodOf(location.search));
  const { from, to } = rangeOf(days);
  const report = useLiveRead(() => readUsage(projectId, from, to), [projectId, from, to], feed.latest);
  const pick = (d: Period) => {
    setDays(d);
    // The period stays in the address: a reload or a shared link shows the same days.
    history.replaceState(null, "", `${location.pathname}?days=${d}`);
  };

  return (
    <section class="usage-page">
      <ProjectTabs projectId={projectId} name={feed.project?.name} current="usage" status={feed.status} />
      <div class="usage-head">
        <h2>Usage</h2>
        <div class="usage-periods" role="group" aria-label="Period">
          {PERIODS.map((d) => (
            <button type="button" key={d} class={d === days ? "" : "secondary"} aria-pressed={d === days} onClick={() => pick(d)}>
              {d} days
            </button>
          ))}
        </div>
        <span class="muted usage-range">
          {from} to {to} (UTC)
        </span>
      </div>
      <Problem message={report.value === null ? feed.error : (report.error ?? feed.error)} />
      {report.value === null ? (
        report.error ? (
          <Failed what="the usage" message={report.error} retry={report.reread} />
        ) : (
          <Loading what="usage" />
        )
      ) : (
        <Report projectId={projectId} report={report.value} days={days} />
      )}
      <Budgets projectId={projectId} latest={feed.latest} />
    </section>
  );
}

function Report({ projectId, report, days }: { projectId: string; report: UsageReport; days: Period }) {
  if (!hasUsage(report.totals))
    return (
      <div class="usage-empty panel" data-loaded="true">
        <p>
          No usage reported {days === 90 ? "in the last 90 days" : `in the last ${days} days`}.{" "}
          <a {...linkProps(`/projects/${projectId}/connect#telemetry`)}>How to send it</a>: agents export their telemetry to the hub, or report a{" "}
          <code>usage</code> block when they complete a task.
        </p>
      </div>
    );
  return (
    <div class="usage-report" data-loaded="true">
      <Totals totals={report.totals} />
      <h3>Cost per day</h3>
      <CostChart from={report.from} to={report.to} rows={report.days} />
      <div class="usage-columns">
        <div>
          <h3>Per model</h3>
          <ModelTable rows={report.models} />
        </div>
        <div>
          <h3>Per agent</h3>
          <AgentTable rows={report.agents} />
        </div>
      </div>
      <h3>Costliest tasks</h3>
      {report.tasks.length === 0 ? <p class="muted">No task used anything in this period.</p> : <TaskTable projectId={projectId} rows={report.tasks} />}
    </div>
  );
}

function Totals({ totals }: { totals: Usage }) {
  const figures: [string, string, string, string][] = [
    ["cost", "Cost", usd(totals.cost_usd), String(totals.cost_usd)],
    ["input", "Input tokens", tokens(totals.input_tokens), exactTokens(totals.input_tokens)],
    ["output", "Output tokens", tokens(totals.output_tokens), exactTokens(totals.output_tokens)],
    ["cache-read", "Cache read", tokens(totals.cache_read_tokens), exactTokens(totals.cache_read_tokens)],
    ["cache-write", "Cache write", tokens(totals.cache_write_tokens), exactTokens(totals.cache_write_tokens)],
    ["api", "API time", apiTime(totals.api_ms), totals.api_ms > 0 ? `${totals.api_ms} ms` : "None reported"],
  ];
  return (
    <dl class="usage-totals">
      {figures.map(([key, label, value, exact]) => (
        <div class={`usage-total usage-total-${key}`} key={key}>
          <dt>{label}</dt>
          <dd title={exact} data-value={key === "cost" ? totals.cost_usd : undefined}>
            {value}
          </dd>
        </div>
      ))}
    </dl>
  );
}
