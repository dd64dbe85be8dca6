/**
 * What admins change about a server (PATCH /api/v1/servers/{id}, revoke, DELETE) and matching on a daemon's first
 * day: a freshly registered server declares no capabilities, takes tasks that require nothing, and takes the others
 * once an admin declares what it can do in the hub.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  bootstrapAdmin,
  call,
  createProject,
  createUser,
  daemonRegistration,
  expectProblem,
  registerAgent,
  registrationToken,
  until,
} from "./helpers";
import { connectDaemon } from "./fake-daemon";
import { cli, expectOk, T } from "./task-world";

let admin: string;
let member: Awaited<ReturnType<typeof createUser>>;
let project: { id: string };
const S = "/api/v1/servers";

beforeAll(async () => {
  admin = await bootstrapAdmin();
  member = await createUser(admin, "member");
  project = await createProject(admin, "Day one");
  await addMember(admin, project.id, member.id);
});

/** A server serving only `projectId` (so no other test's server competes for its tasks), as a fresh daemon registers it. */
const fresh = (name: string, projectId = project.id) => registerAgent(admin, `${name}-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [projectId] });
const newTask = async (body: Record<string, unknown>, projectId = project.id) =>
  (await expectOk(call("/api/v1/tasks", { token: admin, body: { title: "t", project_id: projectId, ...body } }), 201)).json.id as string;
const autoAssign = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}/auto-assign`, { token: admin, method: "POST" }))).json;
const patch = (id: string, body: unknown, token = admin) => call(`${S}/${id}`, { method: "PATCH", token, body });
const taskOf = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: admin }))).json;

describe("a daemon's first day", () => {
  it("gives a freshly registered server with no capabilities a task that requires nothing", async () => {
    const box = await fresh("bare");
    expect((await expectOk(call(`${S}/${box.id}`, { token: admin }))).json).toMatchObject({ capabilities: null, declared: null, effective: null });
    const task = await newTask({});
    expect(await autoAssign(task)).toEqual({ status: "assigned", server_id: box.id, server_name: box.name, match_score: 75 });
    // One at a time: the default capacity.
    const second = await newTask({ requirements: {} });
    expect(await autoAssign(second)).toEqual({ status: "no_match" });
  });

  it("says precisely why it cannot take a task that needs something, and takes it once an admin declares it", async () => {
    const other = await createProject(admin, "Declared");
    const box = await fresh("typist", other.id);
    const task = await newTask({ requirements: { languages: ["typescript"] } }, other.id);
    const before = (await expectOk(call(`/api/v1/tasks/${task}/matching-agents`, { token: admin }))).json.servers;
    expect(before).toEqual([
      expect.objectContaining({ server_id: box.id, score: -1, reasons: ["declares no languages; the task needs typescript (disqualified)"] }),
    ]);
    expect(await autoAssign(task)).toEqual({ status: "no_match" });

    // The daemon reports rust and one task at a time; the admin declares typescript and three.
    await expectOk(call(`${S}/heartbeat`, { apiKey: box.apiKey, body: { capabilities: { languages: ["rust"], max_concurrent_tasks: 1 } } }));
    const declared = { languages: ["typescript"], tools: ["npm"], max_concurrent_tasks: 3 };
    const changed = await expectOk(patch(box.id, { declared }));
    expect(changed.json).toMatchObject({
      capabilities: { languages: ["rust"], max_concurrent_tasks: 1 },
      declared,
      effective: { languages: ["rust", "typescript"], tools: ["npm"], max_concurrent_tasks: 3 },
    });
    // The waiting task is offered to it as soon as it is declared.
    await until(
      () => taskOf(task),
      (t) => t.status === "assigned",
      "the waiting task offered to the declared server",
    );
    expect((await taskOf(task)).assigned_server_id).toBe(box.id);

    // The declared capacity wins over the daemon's: two more fit, a fourth does not.
    const both = { requirements: { languages: ["rust", "typescript"] } };
    const [a, b, c] = [await newTask(both, other.id), await newTask(both, other.id), await newTask(both, other.id)];
    expect(await autoAssign(a)).toMatchObject({ status: "assigned", server_id: box.id });
    expect(await autoAssign(b)).toMatchObject({ status: "assigned", server_id: box.id });
    expect(await autoAssign(c)).toEqual({ status: "no_match" });
    const shown = (await expectOk(call(`${S}/${box.id}`, { token: admin }))).json;
    expect(shown).toMatchObject({ active_tasks: 3, max_concurrent_tasks: 3 });
    expect(shown.tasks.map((t: { id: string }) => t.id).sort()).toEqual([task, a, b].sort());
    expect((await expectOk(call(S, { token: admin }))).json.servers.find((s: { id: string }) => s.id === box.id)).toMatchObject({
      declared,
      max_concurrent_tasks: 3,
    });

    // A heartbeat replaces what the daemon sent, never what was declared; null forgets the declaration.
    await expectOk(call(`${S}/heartbeat`, { apiKey: box.apiKey, body: { capabilities: { languages: ["go"] } } }));
    expect((await expectOk(call(`${S}/${box.id}`, { token: admin }))).json).toMatchObject({ declared, effective: { languages: ["go", "typescript"] } });
    expect((await expectOk(patch(box.id, { declared: null }))).json).toMatchObject({ declared: null, effective: { languages: ["go"] } });
    const gone = (await expectOk(call(`/api/v1/tasks/${c}/matching-agents`, { token: admin }))).json.servers[0];
    expect(gone.reasons).toEqual(["missing languages: rust, typescript (disqualified)"]);
  });
});

describe("PATCH /api/v1/servers/{id}", () => {
  let box: { id: string; apiKey: string; name: string };
  beforeAll(async () => {
    box = await fresh("patched");
  });

  it("refuses malformed capabilities and an empty change, naming the field and the rule", async () => {
    const cases: [unknown, string, RegExp][] = [
      [{ declared: { languages: "typescript" } }, "declared.languages", /./],
      [{ declared: { languages: [""] } }, "declared.languages.0", /empty/],
      [{ declared: { max_concurrent_tasks: 0 } }, "declared.max_concurrent_tasks", /at least 1/],
      [{ declared: { max_concurrent_tasks: 1.5 } }, "declared.max_concurrent_tasks", /integer/],
      [{ declared: { repos: { api: { languages: "x" } } } }, "declared.repos.api.languages", /./],
      [{ declared: "typescript" }, "declared", /./],
      [{ name: "" }, "name", /empty/],
      [{ name: "x".repeat(201) }, "name", /200/],
      [{}, "name", /`name` or `declared`/],
    ];
    for (const [body, path, message] of cases) {
      const refused = await patch(box.id, body);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors, JSON.stringify(body)).toEqual([expect.objectContaining({ path, message: expect.stringMatching(message) })]);
    }
    expect((await expectOk(call(`${S}/${box.id}`, { token: admin }))).json).toMatchObject({ name: box.name, declared: null });
  });

  it("is for admins only: members, viewers and the server's own key are refused", async () => {
    const viewer = await createUser(admin, "viewer");
    expectProblem(await patch(box.id, { declared: { languages: ["go"] } }, member.token), 403, "FORBIDDEN");
    expectProblem(await patch(box.id, { declared: { languages: ["go"] } }, viewer.token), 403, "FORBIDDEN");
    expectProblem(await call(`${S}/${box.id}`, { method: "PATCH", apiKey: box.apiKey, body: { declared: { languages: ["go"] } } }), 401, "UNAUTHORIZED");
    expectProblem(await call(`${S}/${box.id}`, { method: "DELETE", token: member.token }), 403, "FORBIDDEN");
    expectProblem(await call(`${S}/${box.id}/revoke`, { method: "POST", token: member.token }), 403, "FORBIDDEN");
    expectProblem(await patch(crypto.randomUUID(), { name: "nobody" }), 404, "NOT_FOUND");
    expectProblem(await patch("not-a-uuid", { name: "nobody" }), 404, "NOT_FOUND");
    expect((await expectOk(call(`${S}/${box.id}`, { token: admin }))).json.declared).toBeNull();
  });

  it("renames a server, refuses a name another server has, and registration still re-keys by the name it has now", async () => {
    const other = await fresh("taken");
    expectProblem(await patch(box.id, { name: other.name }), 409, "SERVER_NAME_TAKEN");
    const renamed = `renamed-${crypto.randomUUID().slice(0, 6)}`;
    expect((await expectOk(patch(box.id, { name: renamed }))).json).toMatchObject({ id: box.id, name: renamed });
    // Its key still works, and its name is the new one everywhere.
    expect((await expectOk(call(`${S}/heartbeat`, { apiKey: box.apiKey, body: {} }))).json.status).toBe("ok");
    expect((await expectOk(call(S, { token: admin }))).json.servers.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining([renamed]));
    expect((await expectOk(call(S, { token: admin }))).json.servers.map((s: { name: string }) => s.name)).not.toContain(box.name);
    // The same machine registering under the new name re-keys this server; under the old name it makes a new one.
    const again = await expectOk(
      call(`${S}/register`, { body: daemonRegistration(renamed, await registrationToken(admin, { project_ids: [project.id] })) }),
      201,
    );
    expect(again.json.id).toBe(box.id);
    expectProblem(await call(`${S}/heartbeat`, { apiKey: box.apiKey, body: {} }), 401, "INVALID_API_KEY");
    const old = await expectOk(
      call(`${S}/register`, { body: daemonRegistration(box.name, await registrationToken(admin, { project_ids: [project.id] })) }),
      201,
    );
    expect(old.json.id).not.toBe(box.id);
    box = { id: box.id, apiKey: again.json.api_key, name: renamed };
  });
});

describe("DELETE /api/v1/servers/{id}", () => {
  it("revokes its key, closes its socket, hands its tasks back as a lost agent's and leaves an event", async () => {
    // A project of its own: no other test's waiting task is offered to it when one of its tasks completes.
    const own = await createProject(admin, "Removal");
    const doomed = await fresh("doomed", own.id);
    await expectOk(patch(doomed.id, { declared: { max_concurrent_tasks: 3 } }));
    const daemon = await connectDaemon(doomed.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    const [waiting, running, done] = [await newTask({}, own.id), await newTask({}, own.id), await newTask({}, own.id)];
    for (const id of [waiting, running, done]) await expectOk(call(`/api/v1/tasks/${id}/assign`, { token: admin, body: { server_name: doomed.name } }));
    await expectOk(cli(doomed.apiKey, "POST", `${T}/${running}/start`));
    await expectOk(cli(doomed.apiKey, "POST", `${T}/${done}/start`));
    await expectOk(cli(doomed.apiKey, "POST", `${T}/${done}/complete`, { result: "ok" }));

    const removed = await expectOk(call(`${S}/${doomed.id}`, { method: "DELETE", token: admin }));
    expect(removed.json).toEqual({ id: doomed.id, name: doomed.name, removed: true, tasks_handed_back: 2 });
    expect((await daemon.closed).code).toBe(4004);
    expectProblem(await call(`${S}/heartbeat`, { apiKey: doomed.apiKey, body: {} }), 401, "INVALID_API_KEY");
    expectProblem(await call(`${S}/${doomed.id}`, { token: admin }), 404, "NOT_FOUND");
    expect((await expectOk(call(S, { token: admin }))).json.servers.map((s: { id: string }) => s.id)).not.toContain(doomed.id);
    expectProblem(await call(`${S}/${doomed.id}`, { method: "DELETE", token: admin }), 404, "NOT_FOUND");

    // Not yet started: back to pending, with the lease's event. Under way: failed AGENT_LOST, retryable. Done: untouched.
    expect(await taskOf(waiting)).toMatchObject({ status: "pending", assigned_server_id: null });
    const requeued = (await expectOk(call(`/api/v1/tasks/${waiting}/events`, { token: admin }))).json.events.find((e: any) => e.type === "task_requeued");
    expect(requeued.data).toMatchObject({ reason: "server_removed", server_id: doomed.id, server_name: doomed.name });
    expect(await taskOf(running)).toMatchObject({ status: "failed", error: { code: "AGENT_LOST", recoverable: true } });
    expect(await taskOf(done)).toMatchObject({ status: "done" });
    const log = (await expectOk(call(`/api/v1/projects/${own.id}/events`, { token: admin }))).json.events;
    expect(log.find((e: any) => e.type === "server_removed")).toMatchObject({ data: { server_id: doomed.id, server_name: doomed.name } });
  });

  it("is refused while the server takes part in a live SSH access grant, and changes nothing", async () => {
    const [source, target] = [await fresh("source"), await fresh("target")];
    const grant = await expectOk(
      call("/api/v1/access-grants", { token: admin, body: { source_server_id: source.id, target_server_id: target.id, privilege_level: "standard" } }),
      201,
    );
    for (const box of [source, target]) {
      const refused = await call(`${S}/${box.id}`, { method: "DELETE", token: admin });
      expectProblem(refused, 409, "SERVER_HAS_ACCESS_GRANTS");
      expect(refused.json.grant_ids).toEqual([grant.json.id]);
      expect((await expectOk(call(`${S}/heartbeat`, { apiKey: box.apiKey, body: {} }))).json.status).toBe("ok");
    }
    await expectOk(call(`/api/v1/access-grants/${grant.json.id}`, { method: "DELETE", token: admin }));
    expect((await expectOk(call(`${S}/${source.id}`, { method: "DELETE", token: admin }))).json).toMatchObject({ removed: true, tasks_handed_back: 0 });
  });

  it("revoking (POST .../revoke) keeps the server listed as revoked, its tasks as they are", async () => {
    const kept = await fresh("kept");
    const task = await newTask({});
    await expectOk(call(`/api/v1/tasks/${task}/assign`, { token: admin, body: { server_name: kept.name } }));
    expect((await expectOk(call(`${S}/${kept.id}/revoke`, { method: "POST", token: admin }))).json).toMatchObject({ id: kept.id, revoked: true });
    expect((await expectOk(call(`${S}/${kept.id}`, { token: admin }))).json).toMatchObject({ revoked: true, daemon_connected: false });
    expect(await taskOf(task)).toMatchObject({ status: "assigned", assigned_server_id: kept.id });
  });
});
