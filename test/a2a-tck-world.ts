/**
 * The world the ported checks of A2A's conformance kit run in (test/a2a-conformance.test.ts lists them): a project with
 * a member, an outsider, another project, and one registered agent that works the project's tasks through the hub's
 * ordinary agent API where the kit waits for its own agent to act. Each test file calls `tckWorld()` once.
 */
import { beforeAll, expect } from "vitest";
import { jsonRpc, rpcResult, type RpcOptions } from "./a2a-wire";
import { addMember, bootstrapAdmin, call, createProject, createUser, registerAgent } from "./helpers";
import { T, cli, expectOk, openSession } from "./task-world";

/** The states a SendMessage may answer with while the project's agent works the task (kit: "a valid task state"). */
export const STATES_ON_ANSWER = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"];
export const TERMINAL_STATES = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];
const RESULT = {
  $schema: "orchestratia/task-result/v1",
  summary: "Done",
  contracts: { api_schema: { type: "api_schema", description: "the API", data: { paths: ["/orders"] } } },
};

export let w: {
  admin: string;
  member: Awaited<ReturnType<typeof createUser>>;
  outsider: Awaited<ReturnType<typeof createUser>>;
  project: { id: string };
  other: { id: string };
  agent: { id: string; apiKey: string; name: string };
};

let finished: Promise<{ id: string; contextId: string }> | undefined;
let questioned: Promise<{ id: string; contextId: string }> | undefined;

export function tckWorld() {
  beforeAll(async () => {
    const admin = await bootstrapAdmin();
    const member = await createUser(admin, "member");
    const outsider = await createUser(admin, "member");
    const project = await createProject(admin, "A2A conformance");
    const other = await createProject(admin, "Another project");
    await addMember(admin, project.id, member.id);
    const agent = await registerAgent(admin, `tck-agent-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(
      call("/api/v1/servers/heartbeat", {
        apiKey: agent.apiKey,
        body: { capabilities: { languages: ["typescript"], tools: ["npm"], tags: ["backend"], environments: ["linux"], max_concurrent_tasks: 10 } },
      }),
    );
    await openSession(agent.apiKey, project.id, "worker");
    w = { admin, member, outsider, project, other, agent };
    finished = questioned = undefined;
  });
}

// ---- the front door, as the member of the project calls it ----

export const a2a = (method: string, params: unknown, options: Partial<RpcOptions> & { id?: string | number | null } = {}) =>
  jsonRpc(w.project.id, method, params, { credential: w.member.token, ...options });
export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: crypto.randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra,
});
/** Asked of messages whose task the test then drives: without it the spec has the answer wait for an agent. */
export const answerAtOnce = { returnImmediately: true };

/** A task made of this text, answered as soon as it exists (the project's agent works it later, if at all). */
export async function newTask(text: string, extra: Record<string, unknown> = {}) {
  const result = rpcResult(await a2a("SendMessage", { message: userMessage(text, extra), configuration: answerAtOnce }));
  expect(result.task, JSON.stringify(result)).toBeDefined();
  return result.task;
}
export const getTask = async (id: string, extra: Record<string, unknown> = {}) => rpcResult(await a2a("GetTask", { id, ...extra }));
export const listTasks = async (params: Record<string, unknown>) => rpcResult(await a2a("ListTasks", params));
export const uniqueContext = (what: string) => `${what}-${crypto.randomUUID()}`;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the project's agent, working tasks through the hub's ordinary agent API ----

export const hubTask = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: w.admin }))).json;

/** The agent takes the task up: assigned to it if the front door left it pending, then started. */
export async function takeUp(id: string) {
  if ((await hubTask(id)).status === "pending") {
    const assigned = await call(`/api/v1/tasks/${id}/assign`, { token: w.admin, body: { server_name: w.agent.name } });
    expect([200, 409], assigned.text).toContain(assigned.status);
  }
  expect(await hubTask(id)).toMatchObject({ status: "assigned", assigned_server_id: w.agent.id });
  await expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/start`));
}
/** The agent completes the task; its contracts become the task's artifacts, one each. */
export const complete = (id: string, result: Record<string, unknown> = RESULT) => expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/complete`, { result }));
export const ask = (id: string, question: string) => expectOk(cli(w.agent.apiKey, "POST", `${T}/${id}/help`, { question, intervention_type: "question" }));

/** One task the agent has completed with a contract (so with an artifact), in a context of its own. */
export const finishedTask = () =>
  (finished ??= (async () => {
    const task = await newTask("Write the order API", { contextId: uniqueContext("finished") });
    await takeUp(task.id);
    await complete(task.id);
    return task;
  })());

/** One task with a history: the message that made it, then three questions of the agent, each answered by a follow-up. */
export const taskWithHistory = () =>
  (questioned ??= (async () => {
    const task = await newTask("Initial message for history test", { contextId: uniqueContext("history") });
    await takeUp(task.id);
    for (const i of [1, 2, 3]) {
      await ask(task.id, `Question ${i}?`);
      expect((await getTask(task.id)).status.state).toBe("TASK_STATE_INPUT_REQUIRED");
      rpcResult(
        await a2a("SendMessage", { message: userMessage(`Follow-up message ${i} for history test`, { taskId: task.id }), configuration: answerAtOnce }),
      );
    }
    return task;
  })());

/** A task the agent is working on (the kit's create_working_task): taken up and started, not finished. */
export async function workingTask(text: string) {
  const task = await newTask(text);
  await takeUp(task.id);
  expect((await getTask(task.id)).status.state).toBe("TASK_STATE_WORKING");
  return task;
}
