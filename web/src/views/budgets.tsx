/**
 * A project's budgets on its Usage page: each with what it has spent against its limit (a bar with its thresholds
 * marked), its state, and, for those who may, its limit changed or the budget deleted; and the form that adds one.
 * Read again as usage batches and budget events arrive.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { changeBudget, deleteBudget, listBudgets, type Budget } from "../budgets-api";
import { useCanWrite } from "../me";
import { readAllTasks } from "../project-store";
import { linkProps } from "../router";
import { tasksOf, type HubEvent, type Task } from "../types";
import { exactTokens, tokens, usd } from "../usage-format";
import { useLiveRead } from "../usage-reads";
import { BudgetForm } from "./budget-form";
import { BudgetStateBadge } from "./budget-state";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem, useAction } from "./controls";
import { FieldProblem, refusalOf } from "./field-refusal";

export function Budgets({ projectId, latest }: { projectId: string; latest: HubEvent[] }) {
  const canWrite = useCanWrite();
  const budgets = useLiveRead(() => listBudgets(projectId), [projectId], latest);
  const list = budgets.value;
  // Every task only once someone picks a graph to budget; the few that anchor graph budgets, by id, to name them.
  const [picking, setPicking] = useState(false);
  const tasks = useTasks(projectId, picking);
  const titles = useTitles(
    projectId,
    (list ?? []).flatMap((b) => (b.task_id ? [b.task_id] : [])),
  );

  return (
    <section class="panel budgets" aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <p class="muted">
        A budget caps what the project spends per day or month, or what one task's graph spends in all, in USD or tokens. At each threshold it warns, holds new
        work in its scope (no task is assigned or started there), or stops the running tasks for a person to look at.
      </p>
      {list !== null && <Problem message={budgets.error} />}
      {list === null ? (
        budgets.error ? (
          <Failed what="the budgets" message={budgets.error} retry={budgets.reread} />
        ) : (
          <Loading what="budgets" />
        )
      ) : list.length === 0 ? (
        <p class="muted">No budget yet.</p>
      ) : (
        <ul class="budget-list">
          {list.map((b) => (
            <BudgetItem key={b.id} projectId={projectId} budget={b} titles={titles} canWrite={canWrite} onChanged={budgets.reread} />
          ))}
        </ul>
      )}
      {canWrite && <BudgetForm projectId={projectId} tasks={tasks} onPickGraph={() => setPicking(true)} onCreated={budgets.reread} />}
    </section>
  );
}

/** The project's tasks, read once when first `needed` (to pick the one whose graph a budget covers). */
function useTasks(projectId: string, needed: boolean): Task[] | null {
  const [tasks, setTasks] = useState<Task[] | null>(null);
  useEffect(() => setTasks(null), [projectId]);
  useEffect(() => {
    if (!needed || tasks !== null) return;
    let live = true;
    void readAllTasks(projectId).then(
      (all) => live && setTasks(all.sort((a, b) => b.created_at.localeCompare(a.created_at))),
      () => live && setTasks([]),
    );
    return () => {
      live = false;
    };
  }, [projectId, needed]);
  return tasks;
}

/** The titles of these tasks, read when one is not known yet. */
function useTitles(projectId: string, ids: string[]): Map<string, string> {
  const [titles, setTitles] = useState<Map<string, string>>(new Map());
  const missing = [...new Set(ids)].filter((id) => !titles.has(id));
  useEffect(() => {
    if (missing.length === 0) return;
    let live = true;
    void ok(hub.GET("/api/v1/tasks", { params: { query: { project_id: projectId, ids: missing.join(","), limit: missing.length } } })).then(
      (page) => live && setTitles((known) => new Map([...known, ...tasksOf(page).map((t) => [t.id, t.title] as const)])),
      // Unnamed, a graph budget still links to its task.
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [projectId, missing.join(",")]);
  return titles;
}

const inUsd = (b: Budget) => b.limit_usd != null;
const spentOf = (b: Budget) => (inUsd(b) ? b.spent.cost_usd : b.spent.tokens);
const limitOf = (b: Budget) => (inUsd(b) ? b.limit_usd! : (b.limit_tokens ?? 0));
const amount = (b: Budget, n: number) => (inUsd(b) ? usd(n) : `${tokens(n)} tokens`);

function scopeOf(b: Budget, titles: Map<string, string>, projectId: string) {
  if (b.scope === "project") return <>The project, per {b.period ?? "period"}</>;
  return (
    <>
      The graph of{" "}
      {b.task_id ? <a {...linkProps(`/projects/${projectId}/tasks/${b.task_id}`)}>{titles.get(b.task_id) ?? `task ${b.task_id.slice(0, 8)}`}</a> : "a task"}
    </>
  );
}

function BudgetItem(props: { projectId: string; budget: Budget; titles: Map<string, string>; canWrite: boolean; onChanged: () => void }) {
  const b = props.budget;
  const [editing, setEditing] = useState(false);
  const { run, busy, problem } = useAction();
  const percent = b.percent ?? (limitOf(b) > 0 ? (spentOf(b) / limitOf(b)) * 100 : 0);
  const crossed = new Set(b.crossed.map((c) => c.at_percent));
  const remaining = inUsd(b) ? b.remaining_usd : b.remaining_tokens;
  const remove = () =>
    confirm("Delete this budget? Work it holds is let go, and its thresholds no longer act.") &&
    void run("delete", async () => {
      await deleteBudget(props.projectId, b.id);
      toast("Budget deleted.");
      props.onChanged();
    });
  return (
    <li class={`budget budget-${b.state}`} data-budget-id={b.id} data-state={b.state}>
      <div class="budget-head">
        <strong>{scopeOf(b, props.titles, props.projectId)}</strong>
        <BudgetStateBadge state={b.state} />
        {b.period_key && <span class="muted">counting {b.period_key}</span>}
      </div>
      <div
        class="spend-bar"
        role="meter"
        aria-label="Spent of the limit"
        aria-valuemin={0}
        aria-valuemax={limitOf(b)}
        aria-valuenow={spentOf(b)}
        aria-valuetext={`${amount(b, spentOf(b))} of ${amount(b, limitOf(b))}`}
      >
        <span class="spend-fill" style={{ width: `${Math.min(100, percent)}%` }} />
        {b.actions
          .filter((a) => a.at_percent <= 100)
          .map((a) => (
            <span
              key={`${a.action}-${a.at_percent}`}
              class={`spend-mark mark-${a.action}`}
              style={{ left: `${a.at_percent}%` }}
              title={`${a.action} at ${a.at_percent}%`}
            />
          ))}
      </div>
      <p class="budget-numbers">
        <span title={inUsd(b) ? String(b.spent.cost_usd) : exactTokens(b.spent.tokens)}>{amount(b, spentOf(b))}</span> of {amount(b, limitOf(b))} (
        {Math.round(percent)}%){remaining != null && ` · ${amount(b, Math.max(0, remaining))} left`}
      </p>
      <p class="budget-thresholds muted">
        {[...b.actions]
          .sort((x, y) => x.at_percent - y.at_percent)
          .map((a, i) => (
            <span key={i} class={crossed.has(a.at_percent) ? "crossed" : undefined}>
              {i > 0 && " · "}
              {a.action} at {a.at_percent}%{crossed.has(a.at_percent) && " (crossed)"}
            </span>
          ))}
      </p>
      {props.canWrite &&
        (editing ? (
          <LimitForm
            projectId={props.projectId}
            budget={b}
            onDone={(changed) => {
              setEditing(false);
              if (changed) (toast("Limit changed."), props.onChanged());
            }}
          />
        ) : (
          <div class="budget-controls">
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Change limit
            </button>
            <button type="button" class="danger" disabled={busy !== null} aria-busy={busy !== null} onClick={remove}>
              Delete
            </button>
            {problem("delete")}
          </div>
        ))}
    </li>
  );
}

/** Changes a budget's limit, in its own unit; a refusal shows beside the field. */
function LimitForm({ projectId, budget, onDone }: { projectId: string; budget: Budget; onDone: (changed: boolean) => void }) {
  const field = inUsd(budget) ? "limit_usd" : "limit_tokens";
  const [value, setValue] = useState(String(limitOf(budget)));
  const [refusal, setRefusal] = useState<{ field?: string; other: string | null } | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await changeBudget(projectId, budget.id, { [field]: Number(value) });
      onDone(true);
    } catch (err) {
      const r = refusalOf(err, [field]);
      setRefusal({ field: r.fields[field], other: r.other ?? (r.fields[field] ? null : messageOf(err)) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form-row budget-limit-form" onSubmit={(e) => void save(e)}>
      <label>
        New limit ({inUsd(budget) ? "USD" : "tokens"})
        <input name={field} type="number" min="0" step={inUsd(budget) ? "0.01" : "1"} required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <FieldProblem field={field} message={refusal?.field} />
      </label>
      <button type="submit" disabled={busy} aria-busy={busy}>
        Save
      </button>
      <button type="button" class="secondary" onClick={() => onDone(false)}>
        Cancel
      </button>
      <Problem message={refusal?.other} />
    </form>
  );
}
