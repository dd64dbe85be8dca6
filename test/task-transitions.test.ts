/** Every (status, action) pair through HTTP: the table holds end to end, with the right actor for each action. */
import { beforeAll, describe, expect, it } from "vitest";
import { allowedActions, LIFECYCLE, TASK_ACTIONS, TASK_STATUSES, type TaskAction } from "../src/domain/lifecycle";
import { call, expectProblem, type Reply } from "./helpers";
import { cli, createWorld, T, taskIn, taskStatus, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Transitions");
});

/** Takes `action` on the task as the party the lifecycle allows to take it. */
function act(action: TaskAction, id: string, interventionId?: string): Promise<Reply> {
  const asWorker = (method: string, path: string, data?: unknown) => cli(w.worker.apiKey, method, `${T}/${id}${path}`, data);
  const asPerson = (path: string, body: unknown = {}) => call(`/api/v1/tasks/${id}${path}`, { token: w.member.token, body });
  switch (action) {
    case "assign":
      return cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" });
    case "start":
      return asWorker("POST", "/start");
    case "plan":
      return asWorker("POST", "/plan", { plan: { summary: "p" } });
    case "approve_plan":
      return asPerson("/approve-plan");
    case "revise_plan":
      return asPerson("/revise-plan", { feedback: "more tests" });
    case "complete":
      return asWorker("POST", "/complete", { result: "another result" });
    case "fail":
      return asWorker("POST", "/fail", { error: "x" });
    case "help":
      return asWorker("POST", "/help", { question: "q?" });
    case "respond":
      return call(`/api/v1/interventions/${interventionId}/respond`, { token: w.member.token, body: { response: "this way" } });
    case "retry":
      return asPerson("/retry");
    case "cancel":
      return cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`);
    case "update":
      return cli(w.orchestrator.apiKey, "PUT", `${T}/${id}`, { title: "renamed" });
    case "reject":
      return asWorker("POST", "/reject", { reason: "not for this machine" });
  }
}

describe("each status against each action", () => {
  for (const status of TASK_STATUSES) {
    for (const action of TASK_ACTIONS) {
      const allowed = LIFECYCLE[action].from.includes(status);
      // respond needs an open intervention, which only a task in needs_human has.
      if (action === "respond" && status !== "needs_human") continue;
      it(`${status} × ${action}: ${allowed ? "allowed" : "409"}`, async () => {
        const task = await taskIn(w, status);
        const reply = await act(action, task.id, task.interventionId);
        if (allowed) {
          expect(reply.status, reply.text).toBe(200);
          const rule = LIFECYCLE[action];
          // A task that went through planning keeps requiring a plan when reassigned.
          const expected = rule.to === "same" ? status : status === "planning" && rule.toWithPlan ? rule.toWithPlan : rule.to;
          expect(await taskStatus(w, task.id)).toBe(expected);
        } else if (status === "done" && action === "complete") {
          expectProblem(reply, 409, "RESULT_CONFLICT");
        } else {
          expectProblem(reply, 409, "INVALID_TRANSITION");
          expect(reply.json.current_status).toBe(status);
          expect(reply.json.allowed_actions).toEqual(allowedActions(status));
          expect(reply.json.detail).toContain(status);
          expect(await taskStatus(w, task.id)).toBe(status);
        }
      });
    }
  }
});

describe("the wrong party", () => {
  it("refuses start, complete and help from an agent the task is not assigned to", async () => {
    const assigned = await taskIn(w, "assigned");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${assigned.id}/start`), 403, "NOT_ALLOWED");
    const running = await taskIn(w, "running");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${running.id}/complete`, { result: "mine" }), 403, "NOT_ALLOWED");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${running.id}/help`, { question: "?" }), 403, "NOT_ALLOWED");
    expect(await taskStatus(w, running.id)).toBe("running");
  });

  it("refuses approve-plan and retry from agents, and start from people", async () => {
    const review = await taskIn(w, "plan_review");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${review.id}/approve-plan`), 403, "NOT_ALLOWED");
    const failed = await taskIn(w, "failed");
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${failed.id}/retry`), 403, "NOT_ALLOWED");
    const assigned = await taskIn(w, "assigned");
    expectProblem(await call(`/api/v1/tasks/${assigned.id}/start`, { token: w.admin, method: "POST" }), 403, "NOT_ALLOWED");
  });

  it("refuses every write from a viewer", async () => {
    const { createUser } = await import("./helpers");
    const viewer = await createUser(w.admin, "viewer");
    await call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } });
    const task = await taskIn(w, "plan_review");
    expect((await call(`/api/v1/tasks/${task.id}`, { token: viewer.token })).status).toBe(200);
    expectProblem(await call(`/api/v1/tasks/${task.id}/approve-plan`, { token: viewer.token, method: "POST" }), 403, "FORBIDDEN");
    expectProblem(await call("/api/v1/tasks", { token: viewer.token, body: { title: "x", project_id: w.project.id } }), 403, "FORBIDDEN");
  });
});

describe("transitions in detail", () => {
  it("records the plan and the feedback, and approve-plan starts the clock", async () => {
    const task = await taskIn(w, "plan_review");
    const detail = (await cli(w.worker.apiKey, "GET", `${T}/${task.id}`)).json;
    expect(detail.plan).toEqual({ summary: "the plan" });
    const revised = await call(`/api/v1/tasks/${task.id}/revise-plan`, { token: w.member.token, body: { feedback: "split it" } });
    expect(revised.json).toMatchObject({ status: "planning", plan_feedback: "split it" });
    await cli(w.worker.apiKey, "POST", `${T}/${task.id}/plan`, { plan: { summary: "v2" } });
    const approved = await call(`/api/v1/tasks/${task.id}/approve-plan`, { token: w.member.token, method: "POST" });
    expect(approved.json).toMatchObject({ status: "running", plan: { summary: "v2" }, started_at: expect.any(String) });
  });

  it("resumes a task only when its last open question is answered, and cancels open questions when it ends", async () => {
    const task = await taskIn(w, "needs_human");
    const second = await cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "and also?", intervention_type: "help" });
    expect(second.json).toEqual({ intervention_id: expect.any(String), status: "pending", task_id: task.id });
    await call(`/api/v1/interventions/${task.interventionId}/respond`, { token: w.member.token, body: { response: "left" } });
    expect(await taskStatus(w, task.id)).toBe("needs_human");
    const answered = await call(`/api/v1/interventions/${second.json.intervention_id}/respond`, { token: w.member.token, body: { response: "yes" } });
    expect(answered.json).toMatchObject({ status: "responded", response: "yes", responded_by: w.member.email });
    expect(await taskStatus(w, task.id)).toBe("running");
    expectProblem(await call(`/api/v1/interventions/${second.json.intervention_id}/respond`, { token: w.member.token, body: { response: "again" } }), 409, "INTERVENTION_CLOSED");

    const open = await cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "last one" });
    await cli(w.worker.apiKey, "POST", `${T}/${task.id}/fail`, { error: "gave up" });
    const list = await cli(w.worker.apiKey, "GET", `/api/v1/server/interventions?task_id=${task.id}`);
    expect(list.json.find((i: { id: string }) => i.id === open.json.intervention_id).status).toBe("cancelled");
  });

  it("lets agents answer only question interventions", async () => {
    const task = await taskIn(w, "running");
    const help = await cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "need a human", intervention_type: "help" });
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `/api/v1/server/interventions/${help.json.intervention_id}/respond`, { response: "me" }), 403, "NOT_ALLOWED");
    const question = await cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "agent can answer", intervention_type: "question" });
    expect((await cli(w.orchestrator.apiKey, "POST", `/api/v1/server/interventions/${question.json.intervention_id}/respond`, { response: "ok" })).status).toBe(200);
  });

  it("retries a failed task back to pending, clearing its assignment and result", async () => {
    const task = await taskIn(w, "failed");
    const retried = await call(`/api/v1/tasks/${task.id}/retry`, { token: w.member.token, method: "POST" });
    expect(retried.json).toMatchObject({ status: "pending", result: null, assigned_server_id: null, target_session_id: null, started_at: null });
  });
});
