/** The tools each audience is offered, in order: what the workerd tests and the inspector's run in test-browser/ expect. */
export const AGENT_TOOLS = ["tasks_to_do", "get_task", "start_task", "submit_plan", "add_note", "ask_for_help", "complete_task", "delegate_task", "fail_task"];
export const PERSON_TOOLS = [
  "list_projects",
  "list_tasks",
  "get_task",
  "create_task",
  "assign_task",
  "auto_assign_task",
  "approve_plan",
  "answer_intervention",
  "cancel_task",
  "retry_task",
];
