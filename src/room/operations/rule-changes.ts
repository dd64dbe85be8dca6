/** What changes to the approval rules put on the record of each project they reach: who changed which rule, and how. */
import type { Cmd, OpContext, OpOutcome } from "./kernel";
import { recordEvents } from "./kernel";
import { notAllowed } from "./refusals";

export const noteRuleChange = async (ctx: OpContext, cmd: Cmd<"note_rule_change">): Promise<OpOutcome> => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people change approval rules");
  return {
    taskId: "",
    statements: [],
    events: recordEvents(ctx, [{ type: "approval_rule_changed", taskId: null, data: { change: cmd.change, rule: cmd.rule, changed: cmd.changed } }]),
  };
};
