/** A budget's state as a badge: counting, warned, holding new work, or stopped. */
import type { BudgetState } from "../budgets-api";

const TEXT: Record<BudgetState, string> = { ok: "within budget", warned: "warned", held: "held", stopped: "stopped" };
const HINT: Record<BudgetState, string> = {
  ok: "Spending is under every threshold",
  warned: "A warning threshold was crossed",
  held: "No task in its scope is assigned or started until the budget is raised",
  stopped: "Its running tasks were stopped for a person to look at",
};

export function BudgetStateBadge({ state }: { state: BudgetState }) {
  return (
    <span class={`badge budget-state budget-${state}`} title={HINT[state]} data-state={state}>
      {TEXT[state]}
    </span>
  );
}
