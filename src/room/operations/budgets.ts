/** What a usage batch spends on the project's budgets, and the thresholds it crosses: decided here, in the batch that spends. */
import type { UsageRollup } from "../../domain/usage-rollup";
import type { EventDraft } from "../statements";
import type { OpContext } from "./kernel";

export async function spendOnBudgets(_ctx: OpContext, _rollup: UsageRollup): Promise<{ statements: D1PreparedStatement[]; events: EventDraft[] }> {
  return { statements: [], events: [] };
}
