/**
 * Adds a budget: the project's per day or month, or a task's graph; a limit in USD or tokens; and what happens at each
 * threshold (by default a warning at 50 %, a hold at 80 %, a stop at 100 %). A refusal shows beside the field it names.
 */
import { useState } from "preact/hooks";
import { createBudget, type BudgetActionKind, type BudgetPeriod, type BudgetScope, type BudgetThreshold, type NewBudget } from "../budgets-api";
import type { Task } from "../types";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import { toast } from "../ui/toasts";

interface Draft {
  scope: BudgetScope;
  period: BudgetPeriod;
  taskId: string;
  unit: "usd" | "tokens";
  limit: string;
  actions: { at_percent: string; action: BudgetActionKind }[];
}

const DEFAULT_ACTIONS: Draft["actions"] = [
  { at_percent: "50", action: "warn" },
  { at_percent: "80", action: "hold" },
  { at_percent: "100", action: "stop" },
];
const EMPTY: Draft = { scope: "project", period: "month", taskId: "", unit: "usd", limit: "", actions: DEFAULT_ACTIONS };
const ACTIONS: { value: BudgetActionKind; label: string }[] = [
  { value: "warn", label: "warn" },
  { value: "hold", label: "hold new work" },
  { value: "stop", label: "stop running tasks" },
];

/** The request a draft makes: numbers as typed (the hub says what is wrong with them), only the fields its scope has. */
export function budgetOf(d: Draft): NewBudget {
  const actions: BudgetThreshold[] = d.actions.map((a) => ({ at_percent: Number(a.at_percent), action: a.action }));
  const limit = d.unit === "usd" ? { limit_usd: Number(d.limit) } : { limit_tokens: Number(d.limit) };
  return d.scope === "project" ? { scope: "project", period: d.period, ...limit, actions } : { scope: "graph", task_id: d.taskId, ...limit, actions };
}

type Field = "scope" | "period" | "task_id" | "limit_usd" | "limit_tokens" | "actions" | `actions.${number}`;

export function BudgetForm(props: { projectId: string; tasks: Task[] | null; onPickGraph: () => void; onCreated: () => void }) {
  const { projectId, tasks, onCreated } = props;
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [refusal, setRefusal] = useState<Refusal<Field> | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<Draft>) => setDraft({ ...draft, ...change });
  const setAction = (i: number, change: Partial<Draft["actions"][number]>) =>
    set({ actions: draft.actions.map((a, j) => (j === i ? { ...a, ...change } : a)) });
  const fields: Field[] = ["scope", "period", "task_id", "limit_usd", "limit_tokens", "actions", ...draft.actions.map((_, i) => `actions.${i}` as const)];
  const problem = (f: Field) => <FieldProblem field={f} message={refusal?.fields[f]} />;

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await createBudget(projectId, budgetOf(draft));
      setDraft(EMPTY);
      toast("Budget added.");
      onCreated();
    } catch (err) {
      setRefusal(refusalOf(err, fields));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="budget-form" onSubmit={(e) => void create(e)} aria-labelledby="budget-form-title">
      <h3 id="budget-form-title">Add a budget</h3>
      <fieldset class="budget-scope">
        <legend>For</legend>
        <label class="switch">
          <input type="radio" name="budget-scope" checked={draft.scope === "project"} onChange={() => set({ scope: "project" })} /> the project
        </label>
        <label class="switch">
          <input
            type="radio"
            name="budget-scope"
            checked={draft.scope === "graph"}
            onChange={() => {
              set({ scope: "graph" });
              props.onPickGraph();
            }}
          />{" "}
          a task's graph
        </label>
        {problem("scope")}
      </fieldset>
      <div class="budget-fields">
        {draft.scope === "project" ? (
          <label>
            Per
            <select name="period" value={draft.period} onChange={(e) => set({ period: e.currentTarget.value as BudgetPeriod })}>
              <option value="day">day (UTC)</option>
              <option value="month">month (UTC)</option>
            </select>
            {problem("period")}
          </label>
        ) : (
          <label class="grow">
            Task (its graph: what it depends on and what depends on it)
            <select name="task_id" value={draft.taskId} onChange={(e) => set({ taskId: e.currentTarget.value })}>
              <option value="">{tasks === null ? "Loading tasks…" : "Pick a task"}</option>
              {tasks?.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.title} ({t.status.replace("_", " ")})
                </option>
              ))}
            </select>
            {problem("task_id")}
          </label>
        )}
        <label>
          Limit
          <span class="budget-limit">
            <input
              name="limit"
              type="number"
              min="0"
              step={draft.unit === "usd" ? "0.01" : "1"}
              required
              inputMode="decimal"
              value={draft.limit}
              onInput={(e) => set({ limit: e.currentTarget.value })}
            />
            <select name="unit" aria-label="Unit" value={draft.unit} onChange={(e) => set({ unit: e.currentTarget.value as Draft["unit"] })}>
              <option value="usd">USD</option>
              <option value="tokens">tokens</option>
            </select>
          </span>
          {problem(draft.unit === "usd" ? "limit_usd" : "limit_tokens")}
        </label>
      </div>
      <fieldset class="budget-actions">
        <legend>At each threshold</legend>
        {draft.actions.map((a, i) => (
          <div class="budget-action" key={i}>
            <label>
              At %
              <input
                name={`at_percent-${i}`}
                type="number"
                min="1"
                required
                value={a.at_percent}
                onInput={(e) => setAction(i, { at_percent: e.currentTarget.value })}
              />
            </label>
            <label>
              Then
              <select name={`action-${i}`} value={a.action} onChange={(e) => setAction(i, { action: e.currentTarget.value as BudgetActionKind })}>
                {ACTIONS.map((x) => (
                  <option key={x.value} value={x.value}>
                    {x.label}
                  </option>
                ))}
              </select>
            </label>
            <button
              type="button"
              class="link"
              aria-label={`Remove the threshold at ${a.at_percent}%`}
              onClick={() => set({ actions: draft.actions.filter((_, j) => j !== i) })}
            >
              Remove
            </button>
            {problem(`actions.${i}`)}
          </div>
        ))}
        <button type="button" class="link" onClick={() => set({ actions: [...draft.actions, { at_percent: "100", action: "warn" }] })}>
          Add a threshold
        </button>
        {problem("actions")}
      </fieldset>
      <button type="submit" disabled={busy}>
        Add budget
      </button>
      <Problem message={refusal?.other} />
    </form>
  );
}
