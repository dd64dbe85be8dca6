/**
 * DataRef pointers never cross projects, tried as an attacker would. An agent scoped to P3 (and a member of P3) puts
 * `{"$dataref": <P4's id>}` — and one to a DataRef that does not exist — into every place a pointer can ride, on
 * every surface: each is refused with 422 naming the field, and nothing is written. Pointers already stored before
 * the rule (planted in D1) are never given a download URL outside their project, whoever reads them and however.
 * Every answer's raw text is searched for P4's signed URL and bytes.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { FOREIGN_POINTER } from "../src/datarefs/pointers";
import {
  addMember,
  call,
  createProject,
  createUser,
  daemonRegistration,
  expectProblem,
  fetchUrl,
  registerAgent,
  registrationToken,
  type Reply,
} from "./helpers";
import { openSocket, type TestSocket } from "./sockets";
import { cli, createWorld, openSession, T, type World } from "./task-world";

const D = "/api/v1/servers/tasks";
const SECRET = `P4-SECRET-${crypto.randomUUID()}`;
const OWN_BYTES = "P3's own report";

let w: World;
let p4: { id: string };
let attacker: { id: string; apiKey: string; name: string };
let member: Awaited<ReturnType<typeof createUser>>;
let theirs: string;
let own: string;
const nowhere = crypto.randomUUID();

/** A complete DataRef of the project holding `text`, made by `token`'s person. */
async function storedDataref(token: string, projectId: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const created = await call(`/api/v1/projects/${projectId}/datarefs`, { token, body: { size: bytes.byteLength, content_type: "text/plain" } });
  expect(created.status, created.text).toBe(201);
  expect((await fetchUrl(created.json.upload.url, { method: "PUT", body: bytes })).status).toBe(200);
  return created.json.dataref.id as string;
}

beforeAll(async () => {
  w = await createWorld("P3");
  p4 = await createProject(w.admin, "P4");
  attacker = await registerAgent(w.admin, `attacker-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
  await openSession(attacker.apiKey, w.project.id, "attacker");
  member = await createUser(w.admin, "member");
  await addMember(w.admin, w.project.id, member.id);
  theirs = await storedDataref(w.admin, p4.id, SECRET);
  own = await storedDataref(w.admin, w.project.id, OWN_BYTES);
});

const pointer = (id: string) => ({ $dataref: id, size: 10, content_type: "text/plain" });

/** Nothing of P4 in an answer: not its DataRef's URL, not its bytes. */
function expectNothingOfP4(text: string) {
  expect(text).not.toContain(`/api/v1/blobs/${theirs}`);
  expect(text).not.toContain(SECRET);
}

function expectRefused(reply: Reply, path: string) {
  expectProblem(reply, 422, "VALIDATION_FAILED");
  expect(reply.json.errors).toEqual([{ path, message: FOREIGN_POINTER }]);
  // The refusal does not say whether the DataRef exists elsewhere: it does not even repeat its id.
  expect(reply.text).not.toContain(theirs);
  expectNothingOfP4(reply.text);
}

/** A task of P3 created by the attacker, driven to `status` as its assignee would. */
async function attackersTask(status: "pending" | "planning" | "running" | "failed") {
  const created = await cli(attacker.apiKey, "POST", T, { title: "mine", project_id: w.project.id });
  expect(created.status, created.text).toBe(201);
  const id = created.json.id as string;
  if (status === "pending") return id;
  const assigned = await cli(attacker.apiKey, "POST", `${T}/${id}/assign`, { server_name: attacker.name, require_plan: status === "planning" });
  expect(assigned.status, assigned.text).toBe(200);
  if (status === "planning") return id;
  expect((await cli(attacker.apiKey, "POST", `${T}/${id}/start`)).status).toBe(200);
  if (status === "failed") expect((await cli(attacker.apiKey, "POST", `${T}/${id}/fail`, { error: "broke" })).status).toBe(200);
  return id;
}

const spec = (extra: Record<string, unknown>) => ({
  $schema: "orchestratia/task-spec/v1",
  requirements: [{ description: "do it", priority: "must" }],
  input_context: extra,
});
const taskFormat = (extra: Record<string, unknown>) => ({
  id: `tf-${crypto.randomUUID()}`,
  type: "summarise",
  payload: {},
  project_id: w.project.id,
  ...extra,
});

/** Every place of a written task a pointer can ride, with the path the refusal must name; `send` writes `p` there. */
interface Carrier {
  name: string;
  path: string;
  send: (p: unknown) => Promise<Reply>;
  /** The status with the project's own DataRef, when not a 2xx. */
  accepted?: number;
}

const asAgent = (method: string, path: string, body: unknown) => cli(attacker.apiKey, method, path, body);
const asMember = (method: string, path: string, body: unknown) => call(path, { method, token: member.token, body });

const AGENT_CARRIERS: Carrier[] = [
  {
    name: "a core task's structured_spec",
    path: "structured_spec.input_context.blob",
    send: (p) => asAgent("POST", T, { title: "t", project_id: w.project.id, structured_spec: spec({ blob: p }) }),
  },
  { name: "a task-format request's payload", path: "payload.blob", send: (p) => asAgent("POST", T, taskFormat({ payload: { blob: p } })) },
  { name: "a task-format request's context", path: "context.blob", send: (p) => asAgent("POST", T, taskFormat({ context: { blob: p } })) },
  { name: "a task-format request's routing", path: "routing.blob", send: (p) => asAgent("POST", T, taskFormat({ routing: { blob: p } })) },
  {
    name: "a task-format request's observability",
    path: "observability.baggage.blob",
    send: (p) => asAgent("POST", T, taskFormat({ observability: { baggage: { blob: p } } })),
  },
  { name: "an update's payload", path: "payload.blob", send: async (p) => asAgent("PUT", `${T}/${await attackersTask("pending")}`, { payload: { blob: p } }) },
  {
    name: "a task-result/v1 contract's data",
    path: "result.contracts.report.data",
    send: async (p) =>
      asAgent("POST", `${T}/${await attackersTask("running")}/complete`, {
        result: { $schema: "orchestratia/task-result/v1", summary: "done", contracts: { report: { status: "fulfilled", data: p } } },
      }),
  },
  {
    name: "a legacy result",
    path: "result.attachments.0",
    send: async (p) => asAgent("POST", `${T}/${await attackersTask("running")}/complete`, { result: { attachments: [p] } }),
  },
  {
    name: "an output envelope's artifact",
    path: "result.artifacts.0.blob",
    send: async (p) =>
      asAgent("POST", `${T}/${await attackersTask("running")}/complete`, {
        result: {
          success: true,
          summary: "done",
          recommendation: "proceed",
          artifacts: [{ path: "out/report.txt", operation: "create", content: "x", blob: p }],
        },
      }),
  },
  {
    name: "the fail error's details",
    path: "error.details.blob",
    send: async (p) => asAgent("POST", `${T}/${await attackersTask("running")}/fail`, { error: { code: "BROKE", message: "broke", details: { blob: p } } }),
  },
  {
    name: "a late result",
    path: "result.blob",
    // Kept as late_result, and answered 409.
    accepted: 409,
    send: async (p) => asAgent("POST", `${T}/${await attackersTask("failed")}/complete`, { result: { blob: p } }),
  },
  { name: "a plan", path: "plan.steps.0", send: async (p) => asAgent("POST", `${T}/${await attackersTask("planning")}/plan`, { plan: { steps: [p] } }) },
  {
    name: "an intervention's context",
    path: "context.blob",
    send: async (p) => asAgent("POST", `${T}/${await attackersTask("running")}/help`, { question: "which?", context: { blob: p } }),
  },
  {
    name: "a note",
    path: "attachment",
    send: async (p) => asAgent("POST", `${T}/${await attackersTask("pending")}/notes`, { content: "see attached", attachment: p }),
  },
  // The official daemon's own task routes.
  {
    name: "the daemon's completion",
    path: "result.contracts.report.data",
    send: async (p) => asAgent("POST", `${D}/${await attackersTask("running")}/complete`, { result: { summary: "done", contracts: { report: { data: p } } } }),
  },
  {
    name: "the daemon's failure",
    path: "error.details.blob",
    send: async (p) => asAgent("POST", `${D}/${await attackersTask("running")}/fail`, { error: { code: "BROKE", message: "broke", details: { blob: p } } }),
  },
  {
    name: "the daemon's question",
    path: "context.blob",
    send: async (p) => asAgent("POST", `${D}/${await attackersTask("running")}/help`, { question: "which?", context: { blob: p } }),
  },
];

const PEOPLE_CARRIERS: Carrier[] = [
  {
    name: "a core task's structured_spec",
    path: "structured_spec.input_context.blob",
    send: (p) => asMember("POST", "/api/v1/tasks", { title: "t", project_id: w.project.id, structured_spec: spec({ blob: p }) }),
  },
  { name: "a task-format request's payload", path: "payload.blob", send: (p) => asMember("POST", "/api/v1/tasks", taskFormat({ payload: { blob: p } })) },
  {
    name: "an update's payload",
    path: "payload.blob",
    send: async (p) => asMember("PUT", `/api/v1/tasks/${await attackersTask("pending")}`, { payload: { blob: p } }),
  },
  {
    name: "a note",
    path: "attachment",
    send: async (p) => asMember("POST", `/api/v1/tasks/${await attackersTask("pending")}/notes`, { content: "see", attachment: p }),
  },
];

/** What of P3 and P4 D1 holds that points to `id`, anywhere a pointer could have been written. */
async function storedPointersTo(id: string) {
  const like = `%${id}%`;
  const count = async (query: string) => (await env.DB.prepare(query).bind(like).first<{ n: number }>())!.n;
  return {
    tasks: await count(
      "SELECT count(*) AS n FROM tasks WHERE coalesce(structured_spec, '') || coalesce(result, '') || coalesce(payload, '') || coalesce(context, '') || coalesce(routing, '') || coalesce(observability, '') || coalesce(plan, '') || coalesce(error, '') || coalesce(late_result, '') LIKE ?1",
    ),
    interventions: await count("SELECT count(*) AS n FROM interventions WHERE coalesce(context, '') || coalesce(options, '') LIKE ?1"),
    notes: await count("SELECT count(*) AS n FROM task_notes WHERE content LIKE ?1"),
    events: await count("SELECT count(*) AS n FROM events WHERE data LIKE ?1"),
    servers: await count("SELECT count(*) AS n FROM servers WHERE coalesce(system_info, '') || coalesce(capabilities, '') || coalesce(repos, '') LIKE ?1"),
  };
}
const NOTHING = { tasks: 0, interventions: 0, notes: 0, events: 0, servers: 0 };

describe("a pointer written into a project's object", () => {
  for (const [surface, carriers] of [
    ["the agent surfaces", AGENT_CARRIERS],
    ["the people surface", PEOPLE_CARRIERS],
  ] as const) {
    it(`is refused on ${surface} when it names another project's DataRef or none, in every carrier, and taken for the project's own`, async () => {
      for (const carrier of carriers) {
        for (const id of [theirs, nowhere]) {
          const reply = await carrier.send(pointer(id));
          expect(reply.status, `${carrier.name}: ${reply.text}`).toBe(422);
          expectRefused(reply, carrier.path);
        }
        const accepted = await carrier.send(pointer(own));
        if (carrier.accepted) expect(accepted.status, accepted.text).toBe(carrier.accepted);
        else expect(accepted.status, `${carrier.name} with P3's own DataRef: ${accepted.text}`).toBeLessThan(300);
      }
      expect(await storedPointersTo(theirs)).toEqual(NOTHING);
      expect(await storedPointersTo(nowhere)).toEqual(NOTHING);
    });
  }

  it("is found however its key is spelt in the JSON text", async () => {
    const body = JSON.stringify({ title: "escaped", project_id: w.project.id, structured_spec: spec({ blob: pointer(theirs) }) }).replace(
      '"$dataref"',
      '"\\u0024data\\u0072ef"',
    );
    expectRefused(await call(T, { apiKey: attacker.apiKey, raw: body, headers: { "Content-Type": "application/json" } }), "structured_spec.input_context.blob");
  });

  it("names every wrong pointer of a body at once, and one whose $dataref is not a string", async () => {
    const reply = await asAgent("POST", T, taskFormat({ payload: { a: pointer(theirs), list: [pointer(own), pointer(nowhere)], odd: { $dataref: 7 } } }));
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: { path: string }) => e.path)).toEqual(["payload.a", "payload.list.1", "payload.odd"]);
  });

  it("is refused in a server's system_info, capabilities and repos, even the server's own project's: a server belongs to no project", async () => {
    for (const id of [theirs, nowhere, own]) {
      const token = await registrationToken(w.admin, { project_ids: [w.project.id] });
      const registration = {
        ...daemonRegistration(`probe-${crypto.randomUUID().slice(0, 6)}`, token),
        system_info: { cpu_count: 8, blob: pointer(id) },
        capabilities: { $schema: "orchestratia/capabilities/v1", blob: pointer(id) },
        repos: { api: pointer(id) },
      };
      const registered = await call("/api/v1/servers/register", { body: registration });
      expectProblem(registered, 422, "VALIDATION_FAILED");
      expect(registered.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["capabilities.blob", "repos.api", "system_info.blob"]);
      const beat = await call("/api/v1/servers/heartbeat", {
        apiKey: attacker.apiKey,
        body: { system_info: { blob: pointer(id) }, capabilities: { blob: pointer(id) } },
      });
      expectProblem(beat, 422, "VALIDATION_FAILED");
      expect(beat.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["capabilities.blob", "system_info.blob"]);
      expectNothingOfP4(registered.text + beat.text);
    }
    expect((await storedPointersTo(theirs)).servers).toBe(0);
  });

  it("is refused over the agent socket, in a submitted task's payload, a log's or a question's context and an ask-user option", async () => {
    const socket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": attacker.apiKey });
    const messages = [
      ["request:submit-task", { name: "probe", payload: { blob: null } }, "payload.payload.blob"],
      ["event:log", { level: "info", message: "m", context: { blob: null } }, "payload.context.blob"],
      ["event:question", { question: "q", context: { blob: null } }, "payload.context.blob"],
      ["request:ask-user", { question: "q", options: [{ label: "this", value: null }] }, "payload.options.0.value"],
    ] as const;
    for (const [type, payload, path] of messages) {
      for (const id of [theirs, nowhere]) {
        const planted = JSON.parse(JSON.stringify(payload).replace("null", JSON.stringify(pointer(id))));
        const messageId = crypto.randomUUID();
        socket.send({ type, id: messageId, payload: planted });
        const answer = await socket.next((f) => f.correlationId === messageId);
        expect(answer.type, type).toBe("response:error");
        expect(answer.error.code).toBe("INVALID_REQUEST");
        expect(answer.error.details).toEqual([{ path, message: FOREIGN_POINTER }]);
        expectNothingOfP4(JSON.stringify(answer));
      }
    }
    const submitted = crypto.randomUUID();
    socket.send({ type: "request:submit-task", id: submitted, payload: { name: "own", payload: { blob: pointer(own) } } });
    const ok = await socket.next((f) => f.correlationId === submitted);
    expect(ok.type).toBe("response:success");
    socket.ws.close();
    expect(await storedPointersTo(theirs)).toEqual(NOTHING);
    expect(await storedPointersTo(nowhere)).toEqual(NOTHING);
  });
});

describe("a pointer stored before the rule", () => {
  /** A task of P3 assigned to the attacker, with P4's DataRef and P3's own planted in every field, as an old write could have left them. */
  async function plantedTask() {
    const id = await attackersTask("pending");
    const assigned = await cli(attacker.apiKey, "POST", `${T}/${id}/assign`, { server_name: attacker.name });
    expect(assigned.status).toBe(200);
    const both = { theirs: pointer(theirs), own: pointer(own) };
    const json = JSON.stringify(both);
    await env.DB.prepare(
      `UPDATE tasks SET structured_spec = ?1, result = ?2, payload = ?1, context = ?1, routing = ?1, observability = ?1, plan = ?1, error = ?3, late_result = ?4 WHERE id = ?5`,
    )
      .bind(
        JSON.stringify({ $schema: "orchestratia/task-spec/v1", requirements: [{ description: "d", priority: "must" }], ...both }),
        JSON.stringify({ summary: "s", contracts: { report: { status: "fulfilled", data: both.theirs }, mine: { status: "fulfilled", data: both.own } } }),
        JSON.stringify({ code: "X", message: "m", details: both, recoverable: true }),
        JSON.stringify({ result: both, structured: false, server_id: attacker.id, server_name: attacker.name, received_at: new Date().toISOString() }),
        id,
      )
      .run();
    const help = await cli(attacker.apiKey, "POST", `${T}/${await attackersTask("running")}/help`, { question: "planted?" });
    await env.DB.prepare("UPDATE interventions SET context = ?1 WHERE id = ?2").bind(json, help.json.intervention_id).run();
    await env.DB.prepare("UPDATE servers SET system_info = ?1, capabilities = ?1, repos = ?1 WHERE id = ?2").bind(json, attacker.id).run();
    return id;
  }

  it("gets no URL outside its project, whoever reads it and however, while the project's own DataRef gets one", async () => {
    const id = await plantedTask();
    const reads: [string, () => Promise<Reply>][] = [
      ["agent: task", () => cli(attacker.apiKey, "GET", `${T}/${id}`)],
      ["agent: task-format", () => cli(attacker.apiKey, "GET", `${T}/${id}?format=task-format`)],
      ["agent: list", () => cli(attacker.apiKey, "GET", T)],
      ["agent: list in P3", () => cli(attacker.apiKey, "GET", `${T}?project_id=${w.project.id}&format=task-format`)],
      ["agent: check", () => cli(attacker.apiKey, "GET", `${T}/check`)],
      ["agent: envelope", () => cli(attacker.apiKey, "GET", `${T}/${id}/envelope`)],
      ["agent: interventions", () => cli(attacker.apiKey, "GET", "/api/v1/server/interventions")],
      ["agent: servers", () => cli(attacker.apiKey, "GET", "/api/v1/server/servers")],
      ["daemon: poll", () => cli(attacker.apiKey, "GET", `${D}/poll`)],
      ["member: task", () => call(`/api/v1/tasks/${id}`, { token: member.token })],
      ["member: list", () => call("/api/v1/tasks", { token: member.token })],
      ["member: interventions", () => call("/api/v1/interventions", { token: member.token })],
      ["member: servers", () => call("/api/v1/servers", { token: member.token })],
      ["admin: task", () => call(`/api/v1/tasks/${id}`, { token: w.admin })],
      ["admin: list", () => call("/api/v1/tasks", { token: w.admin })],
      ["admin: servers", () => call("/api/v1/servers", { token: w.admin })],
      ["admin: server", () => call(`/api/v1/servers/${attacker.id}`, { token: w.admin })],
    ];
    for (const [what, read] of reads) {
      const reply = await read();
      expect(reply.status, `${what}: ${reply.text}`).toBe(200);
      expectNothingOfP4(reply.text);
    }

    // The task read as a whole: P3's own DataRef is linked wherever it rides, P4's nowhere, even for an admin who sees P4.
    for (const reply of [await cli(attacker.apiKey, "GET", `${T}/${id}`), await call(`/api/v1/tasks/${id}`, { token: w.admin })]) {
      const task = reply.json;
      for (const field of ["structured_spec", "payload", "context", "routing", "observability", "plan"]) {
        expect(task[field].own.url, field).toContain(`/api/v1/blobs/${own}`);
        expect(task[field].theirs, field).toEqual(pointer(theirs));
      }
      expect(task.result.contracts.mine.data.url).toContain(`/api/v1/blobs/${own}`);
      expect(task.error.details.own.url).toContain(`/api/v1/blobs/${own}`);
      expect(task.late_result.result.own.url).toContain(`/api/v1/blobs/${own}`);
      expect(await (await fetchUrl(task.payload.own.url)).text()).toBe(OWN_BYTES);
    }
    // A server belongs to no project: nothing it holds is linked.
    const server = await call(`/api/v1/servers/${attacker.id}`, { token: w.admin });
    expect(server.text).not.toContain("/api/v1/blobs/");

    // The agent socket answers the same.
    const socket: TestSocket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": attacker.apiKey });
    for (const [type, payload] of [
      ["request:get-task", { taskId: id }],
      ["request:query-tasks", {}],
    ] as const) {
      const messageId = crypto.randomUUID();
      socket.send({ type, id: messageId, payload });
      const answer = await socket.next((f) => f.correlationId === messageId);
      expect(answer.type, type).toBe("response:success");
      const text = JSON.stringify(answer);
      expectNothingOfP4(text);
      expect(text).toContain(`/api/v1/blobs/${own}`);
    }
    socket.ws.close();
  });
});
