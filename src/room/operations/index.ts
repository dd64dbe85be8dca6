/** Every room operation, planned by the module of its concern: adding one touches its own module and this table. */
import type { RoomCommand } from "../commands";
import { agentLog, ask, expireQuestions, note, presence, progress, serverRemoved } from "./agent-records";
import { askAgent } from "./agent-questions";
import { approve, changeSettings } from "./approval";
import { assign, autoAssign, sweep } from "./assignment";
import { cancel, complete, fail } from "./completion";
import { addDependency, removeDependency } from "./dependencies";
import type { OpContext, OpOutcome, Planner } from "./kernel";
import { beginWork, create, help, respond, retry, revisePlan, submitPlan, update } from "./lifecycle";
import { disableWebhook } from "./integrations";
import { requestFile, settleFile, uploadFile } from "./file-transfers";
import { expireLease, reject, releaseTask } from "./hand-back";
import { noteRuleChange } from "./rule-changes";
import { accessUse, remoteUse } from "./remote";
import { storeCodeHealth } from "./code-health";
import { recordUsage } from "./usage";
import { changeBudget, createBudget, deleteBudget } from "./budget-changes";
import { changeSession, openSession, reportMcpStatus } from "./sessions";
import { instantiate } from "./runs";
import { flagStalled, flagUnassignable } from "./liveness";
import { changeSchedule, createSchedule, deleteSchedule, fireSchedule } from "./schedules";
import { setReviewPolicy, settleReview, startReview } from "./reviews";

const planners = {
  create,
  instantiate,
  update,
  assign,
  start: (ctx, cmd) => beginWork(ctx, cmd.taskId, "start"),
  approve_plan: (ctx, cmd) => beginWork(ctx, cmd.taskId, "approve_plan"),
  plan: submitPlan,
  revise_plan: revisePlan,
  complete,
  fail,
  help,
  ask_agent: askAgent,
  respond,
  retry,
  reject,
  expire_lease: expireLease,
  flag_stalled: flagStalled,
  flag_unassignable: flagUnassignable,
  release_task: releaseTask,
  server_removed: serverRemoved,
  cancel,
  note,
  auto_assign: autoAssign,
  sweep,
  add_dependency: addDependency,
  remove_dependency: removeDependency,
  progress,
  ask,
  agent_log: agentLog,
  expire_questions: expireQuestions,
  presence,
  open_session: openSession,
  session_status: changeSession,
  session_mcp_status: reportMcpStatus,
  disable_webhook: disableWebhook,
  change_settings: changeSettings,
  note_rule_change: noteRuleChange,
  approve,
  remote_use: remoteUse,
  access_use: accessUse,
  file_upload: uploadFile,
  file_request: requestFile,
  file_settle: settleFile,
  code_health_snapshot: storeCodeHealth,
  record_usage: recordUsage,
  create_budget: createBudget,
  change_budget: changeBudget,
  delete_budget: deleteBudget,
  create_schedule: createSchedule,
  change_schedule: changeSchedule,
  delete_schedule: deleteSchedule,
  fire_schedule: fireSchedule,
  set_review_policy: setReviewPolicy,
  start_review: startReview,
  settle_review: settleReview,
} satisfies { [K in RoomCommand["op"]]: Planner<K> };

export function planOperation(ctx: OpContext, command: RoomCommand): Promise<OpOutcome> {
  return (planners[command.op] as Planner<RoomCommand["op"]>)(ctx, command);
}

export { isProblem, writesAnything, type AgentNotice, type OpContext, type OpOutcome, type WritePlan } from "./kernel";
export { capacityCheck, overCapacity, ServersFull } from "./assignment";
