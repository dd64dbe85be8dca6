/**
 * A task's usage on its page: its cost, each kind of token and the API's time; what its whole graph (the task, what it
 * depends on and what depends on it) used; and the budget it counts against. The graph's total is read again when a
 * usage batch adds to any task of the graph.
 */
import { Fragment } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { taskBudgetOf, type TaskBudget } from "../budgets-api";
import type { HubEvent, Task, TaskUsage as TaskUsageAnswer } from "../types";
import { compact, duration, exactTokens, hasUsage, tokens, tokensOf, usd, type Usage } from "../usage-format";
import { lastUsageSeq } from "../usage-live";
import { BudgetStateBadge } from "./budget-state";
import { Section } from "./task-sections";
import "./usage.css";

export function TaskUsage({ task, events }: { task: Task; events: HubEvent[] }) {
  const [read, setRead] = useState<TaskUsageAnswer | null>(null);
  const graphIds = useMemo(() => new Set([task.id, ...(read?.graph.task_ids ?? [])]), [task.id, read]);
  const seq = lastUsageSeq(events, graphIds);
  // A dependency added or removed anywhere may change what the graph holds.
  const reshaped = events.find((e) => e.event_type === "dependency_added" || e.event_type === "dependency_removed")?.seq ?? 0;
  useEffect(() => setRead(null), [task.id]);
  useEffect(() => {
    let live = true;
    void ok(hub.GET("/api/v1/tasks/{id}/usage", { params: { path: { id: task.id } } })).then(
      (r) => live && setRead(r),
      // The section shows what the task view carries meanwhile.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [task.id, seq, reshaped]);

  const own = task.usage;
  const graph = read && read.graph.task_ids.length > 1 ? read.graph : null;
  const budget = taskBudgetOf(task);
  if (!hasUsage(own) && !hasUsage(graph?.totals) && !budget) return null;
  return (
    <Section title="Usage">
      <dl class="facts usage-facts" data-cost={own?.cost_usd ?? 0}>
        {hasUsage(own) ? <OwnUsage usage={own} /> : <UsageRow label="This task">No usage reported yet.</UsageRow>}
        {graph && (
          <UsageRow label={`Its graph (${graph.task_ids.length} tasks)`}>
            <span class="usage-graph-total" data-cost={graph.totals.cost_usd}>
              {hasUsage(graph.totals) ? compact(graph.totals) : "none yet"}
            </span>
          </UsageRow>
        )}
        {budget && (
          <UsageRow label="Budget">
            <TaskBudgetLine budget={budget} />
          </UsageRow>
        )}
      </dl>
    </Section>
  );
}

function UsageRow({ label, children }: { label: string; children: preact.ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

function OwnUsage({ usage }: { usage: Usage }) {
  const kinds: [string, number][] = [
    ["in", usage.input_tokens],
    ["out", usage.output_tokens],
    ["cache read", usage.cache_read_tokens],
    ["cache write", usage.cache_write_tokens],
  ];
  return (
    <>
      <UsageRow label="Cost">
        <strong class="usage-cost">{usd(usage.cost_usd)}</strong>
      </UsageRow>
      <UsageRow label="Tokens">
        <span title={`${exactTokens(tokensOf(usage))} in all`}>
          {kinds.map(([kind, n], i) => (
            <Fragment key={kind}>
              {/* The dot stays with the kind before it: a line wraps between kinds, never before a dot. */}
              <span class="usage-kind">
                <span title={exactTokens(n)}>{tokens(n)}</span> {kind}
                {i < kinds.length - 1 && " ·"}
              </span>{" "}
            </Fragment>
          ))}
        </span>
      </UsageRow>
      {usage.api_ms > 0 && <UsageRow label="API time">{duration(usage.api_ms)}</UsageRow>}
    </>
  );
}

function TaskBudgetLine({ budget }: { budget: TaskBudget }) {
  const left = [
    budget.remaining_usd != null ? `${usd(Math.max(0, budget.remaining_usd))} left` : null,
    budget.remaining_tokens != null ? `${tokens(Math.max(0, budget.remaining_tokens))} tokens left` : null,
  ].filter(Boolean);
  return (
    <span class="task-budget">
      <BudgetStateBadge state={budget.state} /> {left.join(" · ")}
    </span>
  );
}
