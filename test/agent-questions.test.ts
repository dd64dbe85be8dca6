/**
 * One agent asking another: the daemon's `ask_agent` (its MCP tool posts
 * `POST .../help` with `target_session_id`). Both agents' daemons are faked as
 * hub.py speaks: the question reaches the asked session's daemon as
 * `intervention_for_session`, that agent answers through the interventions
 * API, the answer comes back to the asking session as `intervention_response`,
 * and the asking task keeps working all along.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { aTraceparent, call, createProject, expectProblem, registerAgent } from "./helpers";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";
import { cli, createWorld, expectOk, openSession, T, taskIn, taskStatus, type World } from "./task-world";

let w: World;
/** The daemons of the asking agent (the world's worker) and of the agent asked (the orchestrator). */
let asker: FakeDaemon;
let asked: FakeDaemon;

beforeAll(async () => {
  w = await createWorld("Agent questions");
  asker = await fakeDaemon(w.worker.apiKey);
  asked = await fakeDaemon(w.orchestrator.apiKey);
});

const I = "/api/v1/server/interventions";

/** What the daemon's MCP `ask_agent` posts, field for field (mcp_server.py). */
const askAgent = (taskId: string, question: string, targetSessionId: string, apiKey = w.worker.apiKey) =>
  cli(apiKey, "POST", `${T}/${taskId}/help`, { question, context: "", intervention_type: "question", target_session_id: targetSessionId });

const interventionEvents = async (taskId: string) =>
  (await call(`/api/v1/tasks/${taskId}/events`, { token: w.member.token })).json.events
    .filter((e: any) => e.type.startsWith("intervention_"))
    .map((e: any) => ({ type: e.type, actor: e.actor, data: e.data }));

describe("asking another session's agent", () => {
  it("reaches the asked daemon, keeps the task running, and brings the answer back to the asking session", async () => {
    const { id } = await taskIn(w, "running");
    const reply = await expectOk(askAgent(id, "Which schema version do the users have?", w.orchestratorSession));
    const ivId = reply.json.intervention_id;
    expect(reply.json).toEqual({ intervention_id: expect.any(String), status: "pending", task_id: id });
    expect(await taskStatus(w, id)).toBe("running");

    expect(await asked.socket.next((f) => f.type === "intervention_for_session" && f.intervention_id === ivId)).toEqual({
      type: "intervention_for_session",
      target_session_id: w.orchestratorSession,
      question: `Which schema version do the users have? (answer it: orchestratia intervention respond ${ivId} --response "…")`,
      source: "worker",
      intervention_id: ivId,
      traceparent: aTraceparent(),
    });
    // What hub.py then puts in the asked agent's inbox.
    expect(asked.shown(w.orchestratorSession).at(-1)).toEqual({
      via: "inbox",
      content: `[ask from worker] Which schema version do the users have? (answer it: orchestratia intervention respond ${ivId} --response "…")`,
      author: "hub",
    });
    // The asked agent, which knows no task of the asker's, finds it with `orchestratia intervention list --status pending`.
    const open = await expectOk(cli(w.orchestrator.apiKey, "GET", `${I}?status=pending`));
    expect(open.json).toEqual([
      expect.objectContaining({ id: ivId, intervention_type: "question", target_session_id: w.orchestratorSession, asked_by: `agent:${w.worker.name}` }),
    ]);
    const answered = await expectOk(cli(w.orchestrator.apiKey, "POST", `${I}/${ivId}/respond`, { response: "v3, since the March migration" }));
    expect(answered.json).toMatchObject({
      id: ivId,
      status: "responded",
      response: "v3, since the March migration",
      responded_by: `agent:${w.orchestrator.name}`,
    });

    expect(await asker.socket.next((f) => f.type === "intervention_response" && f.task_id === id)).toEqual({
      type: "intervention_response",
      session_id: w.workerSession,
      task_id: id,
      response: "v3, since the March migration",
      traceparent: aTraceparent(),
    });
    // hub.py types the answer into the asking agent's session.
    expect(asker.shown(w.workerSession).at(-1)).toEqual({ via: "typed", text: "v3, since the March migration", taskId: id });
    expect(await taskStatus(w, id)).toBe("running");
    // Answered once: a second answer is refused, and nothing more reaches the asker.
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${I}/${ivId}/respond`, { response: "v4" }), 409, "INTERVENTION_CLOSED");
    expect(await interventionEvents(id)).toEqual([
      {
        type: "intervention_requested",
        actor: `agent:${w.worker.name}`,
        data: {
          intervention_id: ivId,
          intervention_type: "question",
          question: "Which schema version do the users have?",
          target_session_id: w.orchestratorSession,
          target_session_name: "orchestrator",
          target_server_id: w.orchestrator.id,
          source: "worker",
        },
      },
      { type: "intervention_responded", actor: `agent:${w.orchestrator.name}`, data: { intervention_id: ivId, response: "v3, since the March migration" } },
    ]);
    expect(asker.socket.frames.filter((f) => f.type === "intervention_response" && f.task_id === id)).toHaveLength(1);
  });

  it("records the question as a note of the asked session's current task and the answer as one of the asking task, which notes://inbox serves", async () => {
    const { id } = await taskIn(w, "running");
    // The asked session's current task: the one given to it last and not finished.
    const theirs = (await expectOk(cli(w.worker.apiKey, "POST", T, { title: "Review the schema", project_id: w.project.id }), 201)).json.id;
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${theirs}/assign`, { session_name: "orchestrator" }));
    const ivId = (await expectOk(askAgent(id, "Which port does the API listen on?", w.orchestratorSession))).json.intervention_id;
    await asked.socket.next((f) => f.type === "intervention_for_session" && f.intervention_id === ivId);
    /** Every frame of the same commit has reached a daemon once the link answers its ping. */
    const settled = async (d: FakeDaemon) => {
      d.send({ type: "ping" });
      await d.socket.next((f) => f.type === "pong");
    };
    await settled(asked);
    // mcp_server.py `notes_inbox`: GET .../tasks/{the MCP session's task}/notes with the daemon's key.
    const inbox = await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${theirs}/notes`));
    expect(inbox.json).toEqual([
      {
        id: expect.any(String),
        task_id: theirs,
        author: `agent:${w.worker.name}`,
        content: `[ask from worker] Which port does the API listen on? (answer it: orchestratia intervention respond ${ivId} --response "…")`,
        urgent: false,
        created_at: expect.any(String),
      },
    ]);
    // The daemon queued the question and told its MCP server from intervention_for_session: no task_note repeats it.
    expect(asked.socket.frames.filter((f) => f.type === "task_note" && f.task_id === theirs)).toEqual([]);

    await expectOk(cli(w.orchestrator.apiKey, "POST", `${I}/${ivId}/respond`, { response: "8080, behind the proxy" }));
    await asker.socket.next((f) => f.type === "intervention_response" && f.task_id === id);
    await settled(asker);
    const mine = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}/notes`));
    expect(mine.json.at(-1)).toEqual({
      id: expect.any(String),
      task_id: id,
      author: `agent:${w.orchestrator.name}`,
      content: `[answer from orchestrator to question ${ivId}] 8080, behind the proxy`,
      urgent: false,
      created_at: expect.any(String),
    });
    // Typed once, as intervention_response: no task_note types it again.
    expect(asker.socket.frames.filter((f) => f.type === "task_note" && f.task_id === id)).toEqual([]);
    expect(asker.shown(w.workerSession).filter((x) => x.via === "typed" && x.text.includes("8080"))).toHaveLength(1);
  });

  it("records no question note when the asked session has no current task, and still asks", async () => {
    const { id } = await taskIn(w, "running");
    const idle = await openSession(w.orchestrator.apiKey, w.project.id, `idle-${crypto.randomUUID().slice(0, 6)}`);
    const ivId = (await expectOk(askAgent(id, "Anyone there?", idle))).json.intervention_id;
    expect(await asked.socket.next((f) => f.type === "intervention_for_session" && f.intervention_id === ivId)).toMatchObject({ target_session_id: idle });
    const log = (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.member.token })).json.events;
    expect(log.filter((e: any) => e.type === "note_added" && e.data.intervention_id === ivId)).toEqual([]);
  });

  it("lets only the asked session's agent, or a person, answer: not a third agent, not the asker", async () => {
    const third = await registerAgent(w.admin, `third-${crypto.randomUUID().slice(0, 6)}`);
    await openSession(third.apiKey, w.project.id, "third");
    const { id } = await taskIn(w, "running");
    const ivId = (await expectOk(askAgent(id, "Is the cache warm?", w.orchestratorSession))).json.intervention_id;
    expectProblem(await cli(third.apiKey, "POST", `${I}/${ivId}/respond`, { response: "yes" }), 403, "NOT_ALLOWED");
    expectProblem(await cli(w.worker.apiKey, "POST", `${I}/${ivId}/respond`, { response: "yes" }), 403, "NOT_ALLOWED");
    const still = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${I}?task_id=${id}`))).json;
    expect(still).toEqual([expect.objectContaining({ id: ivId, status: "pending", response: null })]);
    // A person steps in: the asking session hears the answer all the same.
    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: w.member.token, body: { response: "warm since noon" } }));
    expect(await asker.socket.next((f) => f.type === "intervention_response" && f.task_id === id)).toMatchObject({
      session_id: w.workerSession,
      response: "warm since noon",
    });
    expect(await taskStatus(w, id)).toBe("running");
  });

  it("never holds the task: with a person's question open too, only that answer puts it back to work", async () => {
    const { id } = await taskIn(w, "running");
    const toAgent = (await expectOk(askAgent(id, "Which branch?", w.orchestratorSession))).json.intervention_id;
    const toPerson = (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "May I drop the table?" }))).json.intervention_id;
    expect(await taskStatus(w, id)).toBe("needs_human");
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${I}/${toAgent}/respond`, { response: "main" }));
    expect(await taskStatus(w, id)).toBe("needs_human");
    // Asked while waiting on the person, too.
    await expectOk(askAgent(id, "And the tag?", w.orchestratorSession));
    await expectOk(call(`/api/v1/interventions/${toPerson}/respond`, { token: w.member.token, body: { response: "no" } }));
    expect(await taskStatus(w, id)).toBe("running");
  });

  it("refuses a session outside the task's project, closed, unknown or its own, and anything but a question", async () => {
    const { id } = await taskIn(w, "running");
    const elsewhere = await createProject(w.admin, "Elsewhere");
    const otherProjects = await openSession(w.orchestrator.apiKey, elsewhere.id, "elsewhere");
    const gone = await openSession(w.orchestrator.apiKey, w.project.id, "gone");
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `/api/v1/server/sessions/${gone}`));
    for (const target of [otherProjects, gone, crypto.randomUUID(), w.workerSession]) {
      const refused = await askAgent(id, "Anyone?", target);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors.map((e: any) => e.path)).toEqual(["target_session_id"]);
    }
    const help = await cli(w.worker.apiKey, "POST", `${T}/${id}/help`, {
      question: "Help?",
      intervention_type: "help",
      target_session_id: w.orchestratorSession,
    });
    expectProblem(help, 422, "VALIDATION_FAILED");
    expect(help.json.errors.map((e: any) => e.path)).toEqual(["intervention_type"]);
    // Without intervention_type, a question to a session is a question.
    const plain = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "Plain?", target_session_id: w.orchestratorSession }));
    const all = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${I}?task_id=${id}`))).json;
    expect(all.map((i: any) => [i.id, i.intervention_type])).toEqual([[plain.json.intervention_id, "question"]]);
    expect(await taskStatus(w, id)).toBe("running");
  });

  it("is the task's agent's to ask, while it works", async () => {
    const assigned = await taskIn(w, "assigned");
    expectProblem(await askAgent(assigned.id, "Before starting?", w.orchestratorSession), 409, "INVALID_TRANSITION");
    const running = await taskIn(w, "running");
    expectProblem(await askAgent(running.id, "Not mine?", w.workerSession, w.orchestrator.apiKey), 403, "NOT_ALLOWED");
  });
});
