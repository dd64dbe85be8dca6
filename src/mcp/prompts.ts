/** The prompts: the two common workflows, as the messages a client hands its model, in terms of the tools. */
import type { Audience } from "./catalogue";

export interface PromptSpec {
  name: string;
  title: string;
  description: string;
  audience: Audience;
  arguments: { name: string; description: string; required: boolean }[];
  text(args: Record<string, string | undefined>): string;
}

export const PROMPTS: readonly PromptSpec[] = [
  {
    name: "work_next_task",
    title: "Pick up the next task and finish it",
    description: "Take the next task assigned to you, do it, and hand over its result.",
    audience: "agent",
    arguments: [{ name: "session_id", description: "Your session's id, to see only the tasks assigned to it", required: false }],
    text: ({ session_id }) =>
      [
        `Call tasks_to_do${session_id ? ` with session_id ${session_id}` : ""} and take the oldest task that is not blocked.`,
        "Read it with get_task: its spec, acceptance_criteria, and resolved_inputs (what the tasks it depends on handed over).",
        "If it is in planning, write a plan and call submit_plan, then wait for a person to approve it.",
        "If it is assigned, call start_task (a blocked task cannot start yet: pick another).",
        "Do the work. Record progress and decisions with add_note; when you need a person, call ask_for_help and wait for the answer.",
        "When done, call complete_task with a task-result/v1 result: {$schema: 'orchestratia/task-result/v1', summary," +
          " contracts: {<key>: {data}}}, where each contract key is what a downstream task's input dependency asks for.",
        "If the task cannot be done, call fail_task with the reason.",
      ].join("\n"),
  },
  {
    name: "plan_feature",
    title: "Plan a feature as tasks with dependencies",
    description: "Break a feature down into tasks of a project, linked by dependencies, and hand them to agents.",
    audience: "person",
    arguments: [
      { name: "project_id", description: "The project the tasks belong to", required: true },
      { name: "feature", description: "The feature to build", required: true },
    ],
    text: ({ project_id, feature }) =>
      [
        `Plan this feature in project ${project_id ?? "<project_id>"} as tasks: ${feature ?? "<feature>"}`,
        "Look at the project's tasks first (list_tasks with project_id) so that nothing is planned twice.",
        "Split the work into tasks small enough for one agent each, with a clear title, spec and acceptance_criteria.",
        "Create them with create_task, earliest first: a task that needs another's output lists it in dependencies as" +
          " {depends_on_task_id, dependency_type: 'input', contract_key} (or 'blocks' when it only has to wait for it).",
        "Hand each task to an agent with assign_task (a session or server by name) or auto_assign_task (by its requirements).",
        "Then follow them with get_task: approve plans with approve_plan, answer questions with answer_intervention, retry failures with retry_task.",
      ].join("\n"),
  },
];

export const promptsFor = (audience: Audience) => PROMPTS.filter((p) => p.audience === audience);
