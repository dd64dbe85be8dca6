/** The MCP endpoint driven by the official SDK's client: tools for agents and people, a task's whole life, resources and prompts. */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, until } from "./helpers";
import { asAgent, asPerson, listening, resourceJson, structured } from "./mcp-client";
import { asModernAgent, asModernPerson, MODERN } from "./mcp-client-v2";
import { AGENT_TOOLS, PERSON_TOOLS } from "./mcp-tool-names";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP");
});

/**
 * The same tools, resources and prompts through both SDKs: 1.x on 2025-11-25 (initialize and a session) and 2.x on
 * 2026-07-28 (server/discover, then stateless requests carrying their envelope).
 */
const CLIENTS = [
  { revision: "2025-11-25", asAgent, asPerson },
  { revision: MODERN, asAgent: asModernAgent, asPerson: asModernPerson },
] as const;

describe.each(CLIENTS)("on $revision", ({ asAgent, asPerson }) => {
  describe("tools", () => {
    it("an agent is offered the CLI's tools, with schemas from the REST routes and annotations", async () => {
      const { client } = await asAgent(w.worker.apiKey);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(AGENT_TOOLS);
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(byName.get_task!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(byName.fail_task!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      expect(byName.complete_task!.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
      expect(byName.complete_task!.inputSchema).toMatchObject({
        type: "object",
        required: ["id"],
        properties: { id: expect.anything(), result: expect.anything() },
      });
      expect(byName.get_task!.outputSchema).toMatchObject({
        type: "object",
        properties: { resolved_inputs: expect.anything(), dependencies: expect.anything() },
      });
      await client.close();
    });

    it("a person is offered the tools that steer projects", async () => {
      const { client } = await asPerson(w.admin);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(PERSON_TOOLS);
      const projects = structured(await client.callTool({ name: "list_projects", arguments: {} }));
      expect(projects.projects.map((p: { id: string }) => p.id)).toContain(w.project.id);
      await client.close();
    });
  });

  describe("a task from pending to done", () => {
    it("is created with a dependency, worked by an agent, and its downstream receives resolved_inputs", async () => {
      const { client: person } = await asPerson(w.admin);
      const { client: agent } = await asAgent(w.worker.apiKey);
      const up = structured(
        await person.callTool({ name: "create_task", arguments: { project_id: w.project.id, title: "Design the API", spec: "Endpoints" } }),
      );
      const down = structured(
        await person.callTool({
          name: "create_task",
          arguments: {
            project_id: w.project.id,
            title: "Build the client",
            dependencies: [{ depends_on_task_id: up.id, dependency_type: "input", contract_key: "api_schema" }],
          },
        }),
      );
      expect(down).toMatchObject({ status: "pending", blocked: true });
      expect(structured(await person.callTool({ name: "assign_task", arguments: { id: up.id, session_name: "worker" } })).status).toBe("assigned");

      const todo = structured(await agent.callTool({ name: "tasks_to_do", arguments: { session_id: w.workerSession } }));
      expect(todo.tasks.map((t: { id: string }) => t.id)).toContain(up.id);
      expect(structured(await agent.callTool({ name: "start_task", arguments: { id: up.id } })).status).toBe("running");
      expect(structured(await agent.callTool({ name: "add_note", arguments: { id: up.id, content: "Half way" } }))).toMatchObject({ content: "Half way" });
      const data = { endpoints: ["/users"] };
      const done = structured(
        await agent.callTool({
          name: "complete_task",
          arguments: { id: up.id, result: { $schema: "orchestratia/task-result/v1", summary: "Designed", contracts: { api_schema: { data } } } },
        }),
      );
      expect(done.status).toBe("done");

      const downstream = structured(await person.callTool({ name: "get_task", arguments: { id: down.id } }));
      expect(downstream).toMatchObject({ blocked: false, resolved_inputs: { api_schema: data } });
      const listed = structured(await person.callTool({ name: "list_tasks", arguments: { project_id: w.project.id, status: "done" } }));
      expect(listed.tasks.map((t: { id: string }) => t.id)).toContain(up.id);
      expect(new Set(listed.tasks.map((t: { status: string }) => t.status))).toEqual(new Set(["done"]));
      await person.close();
      await agent.close();
    });
  });

  describe("every other tool", () => {
    it("plans are submitted and approved, questions asked and answered, tasks failed, retried, cancelled, auto-assigned and delegated", async () => {
      const { client: person } = await asPerson(w.admin);
      const { client: agent } = await asAgent(w.worker.apiKey);
      const call = (client: typeof person, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }).then(structured);

      const planned = await call(person, "create_task", { project_id: w.project.id, title: "Plan first" });
      expect((await call(person, "assign_task", { id: planned.id, session_name: "worker", require_plan: true })).status).toBe("planning");
      expect((await call(agent, "submit_plan", { id: planned.id, plan: "1. read 2. write" })).status).toBe("plan_review");
      expect((await call(person, "approve_plan", { id: planned.id })).status).toBe("running");

      const help = await call(agent, "ask_for_help", { id: planned.id, question: "Which database?", intervention_type: "question" });
      expect(help).toMatchObject({ status: "pending", task_id: planned.id });
      expect(await call(person, "get_task", { id: planned.id })).toMatchObject({ status: "needs_human" });
      expect(await call(person, "answer_intervention", { id: help.intervention_id, response: "Postgres" })).toMatchObject({ status: "responded" });
      expect((await call(person, "get_task", { id: planned.id })).status).toBe("running");

      expect((await call(agent, "fail_task", { id: planned.id, error: "The disk is full" })).status).toBe("failed");
      expect((await call(person, "retry_task", { id: planned.id })).status).toBe("pending");
      expect((await call(person, "cancel_task", { id: planned.id })).status).toBe("cancelled");

      const unmatched = await call(person, "create_task", { project_id: w.project.id, title: "Needs a role", requirements: { role: "nobody-has-this-role" } });
      expect(await call(person, "auto_assign_task", { id: unmatched.id })).toEqual({ status: "no_match" });

      const delegated = await call(agent, "delegate_task", { project_id: w.project.id, title: "Write the docs", spec: "For the new endpoints" });
      expect(delegated).toMatchObject({ status: "pending", title: "Write the docs" });
      expect(await call(person, "get_task", { id: delegated.id })).toMatchObject({ project_id: w.project.id, spec: "For the new endpoints" });
      await person.close();
      await agent.close();
    });
  });

  describe("resources and prompts", () => {
    it("reads a task and a project's board, and offers templates for both", async () => {
      const { client } = await asPerson(w.admin);
      const id = await newTask(w, { title: "On the board" });
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["orchestratia://tasks/{id}", "orchestratia://projects/{id}/board"]);
      expect(resourceJson(await client.readResource({ uri: `orchestratia://tasks/${id}` }))).toMatchObject({ id, title: "On the board", status: "pending" });
      const board = resourceJson(await client.readResource({ uri: `orchestratia://projects/${w.project.id}/board` }));
      expect(board.columns.pending.map((t: { id: string }) => t.id)).toContain(id);
      await expect(client.readResource({ uri: `orchestratia://tasks/${crypto.randomUUID()}` })).rejects.toThrow(/Task not found/);
      await client.close();
    });

    it("offers each audience its workflow's prompt", async () => {
      const { client: agent } = await asAgent(w.worker.apiKey);
      expect((await agent.listPrompts()).prompts.map((p) => p.name)).toEqual(["work_next_task"]);
      const work = await agent.getPrompt({ name: "work_next_task", arguments: { session_id: w.workerSession } });
      expect(work.messages[0]!.content).toMatchObject({ type: "text", text: expect.stringContaining(`tasks_to_do with session_id ${w.workerSession}`) });
      const { client: person } = await asPerson(w.admin);
      const plan = await person.getPrompt({ name: "plan_feature", arguments: { project_id: w.project.id, feature: "Sign-in with passkeys" } });
      expect(plan.messages[0]!.content).toMatchObject({ text: expect.stringContaining("Sign-in with passkeys") });
      await expect(person.getPrompt({ name: "plan_feature", arguments: { feature: "x" } })).rejects.toThrow(/needs project_id/);
      await agent.close();
      await person.close();
    });
  });
});

describe("resource subscriptions (2025-11-25 sessions)", () => {
  it("tells a subscribed client when its task changes, and stops after unsubscribing", async () => {
    const { client, updated, streamOpen } = await listening(w.admin);
    const id = await newTask(w, { title: "Watched" });
    const other = await newTask(w, { title: "Not watched" });
    const uri = `orchestratia://tasks/${id}`;
    await client.subscribeResource({ uri });
    await until(streamOpen, Boolean, "the session's stream");
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${other}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await until(
      () => updated,
      (u) => u.length > 0,
      "a resources/updated notification",
    );
    expect(updated).toEqual([uri]);
    await client.unsubscribeResource({ uri });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    // A later change of a board subscription still arrives, so the silence about the task is not a dead stream.
    const board = `orchestratia://projects/${w.project.id}/board`;
    await client.subscribeResource({ uri: board });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${other}/start`));
    await until(
      () => updated,
      (u) => u.includes(board),
      "the board's notification",
    );
    expect(updated.filter((u) => u === uri)).toEqual([uri]);
    await client.close();
  });

  it("a person removed from the project hears nothing more of its tasks", async () => {
    const member = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, member.id);
    const other = await createProject(w.admin, "Still a member");
    await addMember(w.admin, other.id, member.id);
    const { client, updated, streamOpen } = await listening(member.token);
    const id = await newTask(w, { title: "Watched until removed" });
    const elsewhere = await newTask(w, { title: "In the other project", project_id: other.id });
    await client.subscribeResource({ uri: `orchestratia://tasks/${id}` });
    await client.subscribeResource({ uri: `orchestratia://projects/${other.id}/board` });
    await until(streamOpen, Boolean, "the session's stream");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members/${member.id}`, { method: "DELETE", token: w.admin }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(call(`/api/v1/tasks/${elsewhere}`, { method: "DELETE", token: w.admin }));
    await until(
      () => updated,
      (u) => u.length > 0,
      "the other project's notification",
    );
    expect(updated).toEqual([`orchestratia://projects/${other.id}/board`]);
    await client.close();
  });
});
