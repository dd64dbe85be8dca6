/**
 * Approval rules: people manage them by role, each daemon gets the active rules that apply to its server in the
 * order its hook applies them, and a change reaches the connected daemons it concerns (and no other) as
 * `approval_rules_updated`, after which they fetch their rules again as hub.py does.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, bootstrapAdmin, call, createProject, createUser, expectProblem, registerAgent, until } from "./helpers";
import { fakeDaemon } from "./fake-daemon";
import { expectOk } from "./task-world";

const R = "/api/v1/approval-rules";
const SERVER_RULES = "/api/v1/server/approval-rules";

let admin: string;
let projectA: { id: string };
let projectB: { id: string };
let memberA: Awaited<ReturnType<typeof createUser>>;
let viewerA: Awaited<ReturnType<typeof createUser>>;
let serverA: Awaited<ReturnType<typeof registerAgent>>;
let serverB: Awaited<ReturnType<typeof registerAgent>>;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  projectA = await createProject(admin, "Rules A");
  projectB = await createProject(admin, "Rules B");
  memberA = await createUser(admin, "member");
  viewerA = await createUser(admin, "viewer");
  await addMember(admin, projectA.id, memberA.id);
  await addMember(admin, projectA.id, viewerA.id);
  serverA = await registerAgent(admin, "rules-a", { project_ids: [projectA.id] });
  serverB = await registerAgent(admin, "rules-b", { project_ids: [projectB.id] });
});

const rule = (body: Record<string, unknown>) => ({ name: "a rule", tool_pattern: "Bash", action: "allow", scope_type: "tenant", ...body });
const create = async (token: string, body: Record<string, unknown>) => (await expectOk(call(R, { token, body: rule(body) }), 201)).json;
const rulesOf = async (apiKey: string) => (await expectOk(call(SERVER_RULES, { apiKey }))).json as any[];

describe("people's API", () => {
  it("stores a rule as given, with its defaults, and shows it to whoever may read it", async () => {
    const created = await create(admin, { name: "npm tests run", param_pattern: "npm test*", scope_type: "project", scope_id: projectA.id });
    expect(created).toMatchObject({
      name: "npm tests run",
      tool_pattern: "Bash",
      param_pattern: "npm test*",
      action: "allow",
      scope_type: "project",
      scope_id: projectA.id,
      agent_filter: "all",
      is_active: true,
    });
    expect((await expectOk(call(`${R}/${created.id}`, { token: viewerA.token }))).json).toEqual(created);
  });

  it("lets members manage their projects' rules only, and viewers none", async () => {
    const own = await create(memberA.token, { scope_type: "project", scope_id: projectA.id, agent_filter: "Claude, codex" });
    expect(own.agent_filter).toBe("claude,codex");
    expectProblem(await call(R, { token: memberA.token, body: rule({}) }), 403, "FORBIDDEN");
    expectProblem(await call(R, { token: memberA.token, body: rule({ scope_type: "server", scope_id: serverA.id }) }), 403, "FORBIDDEN");
    expectProblem(await call(R, { token: viewerA.token, body: rule({ scope_type: "project", scope_id: projectA.id }) }), 403, "FORBIDDEN");
    const other = await call(R, { token: memberA.token, body: rule({ scope_type: "project", scope_id: projectB.id }) });
    expectProblem(other, 422, "VALIDATION_FAILED");
    expect(other.json.errors).toEqual([{ path: "scope_id", message: expect.stringContaining("not a project you can see") }]);

    const renamed = await expectOk(call(`${R}/${own.id}`, { method: "PATCH", token: memberA.token, body: { name: "renamed", is_active: false } }));
    expect(renamed.json).toMatchObject({ name: "renamed", is_active: false, agent_filter: "claude,codex" });
    expectProblem(await call(`${R}/${own.id}`, { method: "PATCH", token: viewerA.token, body: { name: "x" } }), 403, "FORBIDDEN");
    expectProblem(await call(`${R}/${own.id}`, { method: "PATCH", token: memberA.token, body: { scope_type: "tenant" } }), 403, "FORBIDDEN");
    const tenant = await create(admin, {});
    expectProblem(await call(`${R}/${tenant.id}`, { method: "DELETE", token: memberA.token }), 403, "FORBIDDEN");
    expect((await call(`${R}/${own.id}`, { method: "DELETE", token: memberA.token })).status).toBe(204);
    expectProblem(await call(`${R}/${own.id}`, { token: admin }), 404, "NOT_FOUND");
  });

  it("answers 404 for rules of projects and servers the caller cannot see, and lists only the rest", async () => {
    const ofB = await create(admin, { scope_type: "project", scope_id: projectB.id });
    const ofServerB = await create(admin, { scope_type: "server", scope_id: serverB.id });
    const ofServerA = await create(admin, { scope_type: "server", scope_id: serverA.id });
    for (const hidden of [ofB, ofServerB]) {
      expectProblem(await call(`${R}/${hidden.id}`, { token: viewerA.token }), 404, "NOT_FOUND");
      expectProblem(await call(`${R}/${hidden.id}`, { method: "PATCH", token: memberA.token, body: { name: "x" } }), 404, "NOT_FOUND");
      expectProblem(await call(`${R}/${hidden.id}`, { method: "DELETE", token: memberA.token }), 404, "NOT_FOUND");
    }
    const seen = (await expectOk(call(R, { token: viewerA.token }))).json.rules as any[];
    const ids = seen.map((r) => r.id);
    expect(ids).toContain(ofServerA.id);
    expect(ids).not.toContain(ofB.id);
    expect(ids).not.toContain(ofServerB.id);
    expect(seen.every((r) => r.scope_type === "tenant" || r.scope_id === projectA.id || r.scope_id === serverA.id)).toBe(true);
    const all = (await expectOk(call(R, { token: admin }))).json.rules.map((r: any) => r.id);
    expect(all).toEqual(expect.arrayContaining([ofB.id, ofServerB.id, ofServerA.id]));
    const onlyB = (await expectOk(call(`${R}?scope_type=project&scope_id=${projectB.id}`, { token: admin }))).json.rules as any[];
    expect(onlyB.map((r) => r.id)).toContain(ofB.id);
    expect(onlyB.every((r) => r.scope_type === "project" && r.scope_id === projectB.id)).toBe(true);
    expect((await expectOk(call(`${R}?scope_type=project&scope_id=${projectB.id}`, { token: viewerA.token }))).json.rules).toEqual([]);
  });

  it("refuses rules that could never work with 422 naming the field", async () => {
    const refusals: [Record<string, unknown>, string, string][] = [
      [{ tool_pattern: "" }, "tool_pattern", "must not be empty"],
      [{ tool_pattern: "   " }, "tool_pattern", "must not be empty"],
      [{ tool_pattern: "rm -rf" }, "tool_pattern", "can never match a tool name"],
      [{ tool_pattern: "Bash/*" }, "tool_pattern", "can never match a tool name"],
      [{ tool_pattern: "[!a-zA-Z0-9_.:-]*" }, "tool_pattern", "can never match a tool name"],
      [{ tool_pattern: "Bash[" }, "tool_pattern", "can never match a tool name"],
      [{ tool_pattern: "B".repeat(201) }, "tool_pattern", "at most 200"],
      [{ param_pattern: "*".repeat(10 * 1024) }, "param_pattern", "at most 1000"],
      [{ scope_type: "tenant", scope_id: projectA.id }, "scope_id", "must be left out"],
      [{ scope_type: "project" }, "scope_id", "is required"],
      [{ scope_type: "server", scope_id: crypto.randomUUID() }, "scope_id", "not a server you can see"],
      [{ agent_filter: "claude,copilot" }, "agent_filter", '"copilot" is not one'],
      [{ agent_filter: "all,claude" }, "agent_filter", "is not one"],
      [{ agent_filter: "claude," }, "agent_filter", "an empty name"],
      [{ action: "ask" }, "action", ""],
    ];
    for (const [body, path, message] of refusals) {
      const reply = await call(R, { token: admin, body: rule(body) });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors, JSON.stringify(body).slice(0, 100)).toEqual([{ path, message: expect.stringContaining(message) }]);
    }
    const before = (await expectOk(call(R, { token: admin }))).json.rules.length;
    // Globs fnmatch reads oddly are kept as written: "[]B]" is one of "]" and "B", and an unclosed [ is a literal.
    const odd = await create(admin, { tool_pattern: "[]B]ash*", param_pattern: "npm [test" });
    expect(odd).toMatchObject({ tool_pattern: "[]B]ash*", param_pattern: "npm [test" });
    expect((await expectOk(call(R, { token: admin }))).json.rules.length).toBe(before + 1);
  });

  it("puts each change on the record of the projects the rule reaches, with who made it and what changed", async () => {
    const changesIn = async (projectId: string, ruleId: string) =>
      ((await expectOk(call(`/api/v1/projects/${projectId}/events`, { token: admin }))).json.events as any[]).filter(
        (e) => e.type === "approval_rule_changed" && e.data.rule.id === ruleId,
      );
    const own = await create(memberA.token, { name: "tests", param_pattern: "npm test*", scope_type: "project", scope_id: projectA.id });
    await expectOk(call(`${R}/${own.id}`, { token: memberA.token, method: "PATCH", body: { action: "deny", is_active: false } }));
    await expectOk(call(`${R}/${own.id}`, { token: memberA.token, method: "PATCH", body: { name: "tests" } }));
    await expectOk(call(`${R}/${own.id}`, { token: memberA.token, method: "DELETE" }), 204);
    const inA = await changesIn(projectA.id, own.id);
    // The PATCH that changed nothing is not recorded.
    expect(inA.map((e) => [e.data.change, e.data.changed, e.data.rule.action, e.data.rule.is_active])).toEqual([
      ["created", [], "allow", true],
      ["updated", ["action", "is_active"], "deny", false],
      ["deleted", [], "deny", false],
    ]);
    expect(inA.every((e) => e.actor === memberA.email && e.data.rule.param_pattern === "npm test*")).toBe(true);
    expect(await changesIn(projectB.id, own.id)).toEqual([]);

    const onB = await create(admin, { scope_type: "server", scope_id: serverB.id });
    expect((await changesIn(projectB.id, onB.id)).map((e) => e.data.change)).toEqual(["created"]);
    expect(await changesIn(projectA.id, onB.id)).toEqual([]);
    // Moved to a project rule of A: both projects see the change.
    await expectOk(call(`${R}/${onB.id}`, { token: admin, method: "PATCH", body: { scope_type: "project", scope_id: projectA.id } }));
    expect((await changesIn(projectA.id, onB.id)).map((e) => [e.data.change, e.data.changed])).toEqual([["updated", ["scope_type", "scope_id"]]]);
    expect((await changesIn(projectB.id, onB.id)).map((e) => e.data.change)).toEqual(["created", "updated"]);

    const everywhere = await create(admin, { name: "everywhere", action: "deny", tool_pattern: "WebFetch" });
    for (const project of [projectA, projectB]) expect((await changesIn(project.id, everywhere.id)).map((e) => e.data.change)).toEqual(["created"]);
    await expectOk(call(`${R}/${everywhere.id}`, { token: admin, method: "DELETE" }), 204);
  });

  it("keeps a consistent list through dozens of concurrent creates and edits", async () => {
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(memberA.token, { name: `c${i}`, scope_type: "project", scope_id: projectA.id })),
    );
    await Promise.all(
      made.map((r, i) => expectOk(call(`${R}/${r.id}`, { method: "PATCH", token: memberA.token, body: { name: `edited ${i}`, action: "deny" } }))),
    );
    const listed = (await expectOk(call(`${R}?scope_type=project&scope_id=${projectA.id}`, { token: memberA.token }))).json.rules as any[];
    const mine = listed.filter((r) => made.some((m) => m.id === r.id));
    expect(mine.map((r) => r.name).sort()).toEqual(made.map((_, i) => `edited ${i}`).sort());
    expect(mine.every((r) => r.action === "deny")).toBe(true);
    await Promise.all(made.map((r) => call(`${R}/${r.id}`, { method: "DELETE", token: memberA.token })));
    const after = (await expectOk(call(`${R}?scope_type=project&scope_id=${projectA.id}`, { token: memberA.token }))).json.rules as any[];
    expect(after.filter((r) => made.some((m) => m.id === r.id))).toEqual([]);
  });
});

describe("the daemon's rules", () => {
  it("are the active rules of its server, its projects and the tenant, deny first and narrowest scope first", async () => {
    // A fresh pair of servers and projects, so the rules of the tests above do not mix in.
    const p1 = await createProject(admin, "Order 1");
    const p2 = await createProject(admin, "Order 2");
    const s1 = await registerAgent(admin, "order-1", { project_ids: [p1.id] });
    const s2 = await registerAgent(admin, "order-2", { project_ids: [p2.id] });
    const before = new Set((await rulesOf(s1.apiKey)).map((r) => r.id));
    const t1 = await create(admin, { name: "tenant allow" });
    const proj1Allow = await create(admin, { name: "p1 allow", scope_type: "project", scope_id: p1.id });
    const srv1Allow = await create(admin, { name: "s1 allow", scope_type: "server", scope_id: s1.id });
    const tDeny = await create(admin, { name: "tenant deny", action: "deny", tool_pattern: "WebFetch" });
    const srv1Deny = await create(admin, { name: "s1 deny", action: "deny", scope_type: "server", scope_id: s1.id });
    const proj1Deny = await create(admin, { name: "p1 deny", action: "deny", scope_type: "project", scope_id: p1.id });
    const t2 = await create(admin, { name: "tenant allow later" });
    await create(admin, { name: "p1 inactive", scope_type: "project", scope_id: p1.id, is_active: false });
    const proj2 = await create(admin, { name: "p2 allow", scope_type: "project", scope_id: p2.id });
    const srv2 = await create(admin, { name: "s2 deny", action: "deny", scope_type: "server", scope_id: s2.id });

    const got1 = (await rulesOf(s1.apiKey)).filter((r) => !before.has(r.id));
    expect(got1.map((r) => r.name)).toEqual(["s1 deny", "p1 deny", "tenant deny", "s1 allow", "p1 allow", "tenant allow", "tenant allow later"]);
    expect(got1.map((r) => r.id)).toEqual([srv1Deny.id, proj1Deny.id, tDeny.id, srv1Allow.id, proj1Allow.id, t1.id, t2.id]);
    expect(Object.keys(got1[0]).sort()).toEqual([
      "action",
      "agent_filter",
      "id",
      "is_active",
      "name",
      "param_pattern",
      "scope_id",
      "scope_type",
      "tool_pattern",
    ]);
    const got2 = (await rulesOf(s2.apiKey)).filter((r) => !before.has(r.id));
    expect(got2.map((r) => r.id)).toEqual([srv2.id, tDeny.id, proj2.id, t1.id, t2.id]);
    expectProblem(await call(SERVER_RULES, {}), 401, "UNAUTHORIZED");
  });

  it("follow each change: the daemons it concerns are told, the others not", async () => {
    const a = await fakeDaemon(serverA.apiKey);
    const b = await fakeDaemon(serverB.apiKey);
    const told = (d: typeof a) => d.socket.frames.filter((f) => f.type === "approval_rules_updated").length;
    const has = (d: typeof a, id: string) =>
      until(
        () => d.rules() as any[] | undefined,
        (rules) => rules?.some((r) => r.id === id) === true,
        `rule ${id}`,
      );

    const ofA = await create(memberA.token, { name: "pushed to A", scope_type: "project", scope_id: projectA.id });
    await has(a, ofA.id);
    const ofServerB = await create(admin, { name: "pushed to B", scope_type: "server", scope_id: serverB.id });
    await has(b, ofServerB.id);
    expect([told(a), told(b)]).toEqual([1, 1]);

    const tenant = await create(admin, { name: "pushed to all" });
    await Promise.all([has(a, tenant.id), has(b, tenant.id)]);
    expect([told(a), told(b)]).toEqual([2, 2]);

    // Moving a rule from project A to project B tells both; disabling it takes it out of B's file.
    await expectOk(call(`${R}/${ofA.id}`, { method: "PATCH", token: admin, body: { scope_id: projectB.id } }));
    await has(b, ofA.id);
    await until(
      () => told(a),
      (n) => n === 3,
      "A told of the move",
    );
    await expectOk(call(`${R}/${ofA.id}`, { method: "PATCH", token: admin, body: { is_active: false } }));
    await until(
      () => b.rules() as any[],
      (rules) => !rules.some((r) => r.id === ofA.id),
      "the disabled rule gone from B",
    );
    expect(told(a)).toBe(3);

    await expectOk(call(`${R}/${ofServerB.id}`, { method: "DELETE", token: admin }), 204);
    await until(
      () => b.rules() as any[],
      (rules) => !rules.some((r) => r.id === ofServerB.id),
      "the deleted rule gone from B",
    );
    expect(told(a)).toBe(3);
    a.socket.ws.close();
    b.socket.ws.close();
  });
});
