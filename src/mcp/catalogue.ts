/**
 * The MCP tools: each is one REST operation of the hub, named by its method and path. A tool's input and output
 * schemas are that operation's own (its path and query parameters and its JSON body, and its success answer), read
 * from the API's description, which zod-openapi builds from the schemas the route validates with; calling the tool
 * calls the route (dispatch.ts), so every rule, scope and refusal is the REST API's.
 */

/** Who a tool is for: agents (an API key) or people (a JWT or an OAuth token). */
export type Audience = "agent" | "person";

export interface ToolSpec {
  name: string;
  title: string;
  audience: Audience;
  method: "get" | "post" | "delete";
  /** The route's path in the API's description (`/api/v1/server/tasks/{id}/start`). */
  path: string;
  /** What the tool does, for the model choosing it (the operation's own description follows). */
  description: string;
  readOnly: boolean;
  /** Whether the change cannot be taken back by another call (cancelling, failing). */
  destructive?: boolean;
  /** Whether calling it again with the same arguments changes nothing more. */
  idempotent?: boolean;
  /** Query parameters the tool does not offer. */
  omitQuery?: string[];
  /** The route answers either the hub's own shape or a dialect's (`?format=`): the tool offers no format, so answers the hub's. */
  ownShape?: boolean;
  /** The tool makes a task: a client with MCP's Tasks extension may be answered with that task, to follow until it ends. */
  makesTask?: boolean;
}

const AGENT_TASKS = "/api/v1/server/tasks";
const TASKS = "/api/v1/tasks";

const agentTool = (spec: Omit<ToolSpec, "audience">): ToolSpec => ({ ...spec, audience: "agent" });
const personTool = (spec: Omit<ToolSpec, "audience">): ToolSpec => ({ ...spec, audience: "person" });

export const TOOLS: readonly ToolSpec[] = [
  agentTool({
    name: "tasks_to_do",
    title: "Tasks to do",
    method: "get",
    path: `${AGENT_TASKS}/check`,
    description: "The unfinished tasks assigned to this agent's session (with session_id) or server.",
    readOnly: true,
  }),
  agentTool({
    name: "get_task",
    title: "Read a task",
    method: "get",
    path: `${AGENT_TASKS}/{id}`,
    description: "One task, with resolved_inputs: the data its finished dependencies handed over.",
    readOnly: true,
    omitQuery: ["format"],
    ownShape: true,
  }),
  agentTool({
    name: "start_task",
    title: "Start a task",
    method: "post",
    path: `${AGENT_TASKS}/{id}/start`,
    description: "Start an assigned task.",
    readOnly: false,
  }),
  agentTool({
    name: "submit_plan",
    title: "Submit a plan",
    method: "post",
    path: `${AGENT_TASKS}/{id}/plan`,
    description: "Submit the plan of a task in planning for a person's review.",
    readOnly: false,
  }),
  agentTool({
    name: "add_note",
    title: "Add a note",
    method: "post",
    path: `${AGENT_TASKS}/{id}/notes`,
    description: "Add a note to a task.",
    readOnly: false,
  }),
  agentTool({
    name: "ask_for_help",
    title: "Ask for help",
    method: "post",
    path: `${AGENT_TASKS}/{id}/help`,
    description: "Ask a person a question about a task, or for help or approval; the task waits (needs_human) until they answer.",
    readOnly: false,
  }),
  agentTool({
    name: "complete_task",
    title: "Complete a task",
    method: "post",
    path: `${AGENT_TASKS}/{id}/complete`,
    description: "Complete a running task with its result (a task-result/v1 object, or a summary string).",
    readOnly: false,
    idempotent: true,
  }),
  agentTool({
    name: "delegate_task",
    title: "Delegate a task",
    method: "post",
    path: AGENT_TASKS,
    description:
      "Hand work to another agent: a new task in the project (that of session_id, the session it comes from), with dependencies " +
      "on earlier tasks whose results it will receive, and the requirements an agent must meet to be offered it.",
    readOnly: false,
    makesTask: true,
  }),
  agentTool({
    name: "fail_task",
    title: "Fail a task",
    method: "post",
    path: `${AGENT_TASKS}/{id}/fail`,
    description: "Fail a task, saying why.",
    readOnly: false,
    destructive: true,
  }),
  personTool({
    name: "list_projects",
    title: "List projects",
    method: "get",
    path: "/api/v1/projects",
    description: "The projects you can see.",
    readOnly: true,
  }),
  personTool({
    name: "list_tasks",
    title: "List tasks",
    method: "get",
    path: TASKS,
    description: "Tasks you can see, newest first, filtered by project and status, a page at a time.",
    readOnly: true,
    omitQuery: ["format"],
    ownShape: true,
  }),
  personTool({
    name: "get_task",
    title: "Read a task",
    method: "get",
    path: `${TASKS}/{id}`,
    description: "One task, with its dependencies and resolved_inputs.",
    readOnly: true,
    omitQuery: ["format"],
    ownShape: true,
  }),
  personTool({
    name: "create_task",
    title: "Create a task",
    method: "post",
    path: TASKS,
    description: "Create a task in a project, with its dependencies on other tasks of that project.",
    readOnly: false,
    makesTask: true,
  }),
  personTool({
    name: "assign_task",
    title: "Assign a task",
    method: "post",
    path: `${TASKS}/{id}/assign`,
    description: "Give a task to a session or a server.",
    readOnly: false,
  }),
  personTool({
    name: "auto_assign_task",
    title: "Auto-assign a task",
    method: "post",
    path: `${TASKS}/{id}/auto-assign`,
    description: "Give a pending task to the best-matching server.",
    readOnly: false,
  }),
  personTool({
    name: "approve_plan",
    title: "Approve a plan",
    method: "post",
    path: `${TASKS}/{id}/approve-plan`,
    description: "Approve the plan of a task in plan_review; the agent starts work.",
    readOnly: false,
    idempotent: true,
  }),
  personTool({
    name: "answer_intervention",
    title: "Answer an intervention",
    method: "post",
    path: "/api/v1/interventions/{id}/respond",
    description: "Answer an agent's question, help request or approval request.",
    readOnly: false,
  }),
  personTool({
    name: "cancel_task",
    title: "Cancel a task",
    method: "delete",
    path: `${TASKS}/{id}`,
    description: "Cancel a task.",
    readOnly: false,
    destructive: true,
    idempotent: true,
  }),
  personTool({
    name: "retry_task",
    title: "Retry a task",
    method: "post",
    path: `${TASKS}/{id}/retry`,
    description: "Run a failed task again.",
    readOnly: false,
  }),
];

export const toolsFor = (audience: Audience) => TOOLS.filter((t) => t.audience === audience);
export const toolNamed = (audience: Audience, name: string) => TOOLS.find((t) => t.audience === audience && t.name === name);
