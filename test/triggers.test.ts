/**
 * Inbound triggers (API.md "Templates, schedules and triggers"): set up by a project's members with a secret shown
 * once, then called at `POST /hooks/triggers/{id}` (test/trigger-hook.test.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createUser, expectProblem } from "./helpers";
import { createWorld, expectOk, worldUnder, type World } from "./task-world";
import { triggerTemplate, triggersOf } from "./trigger-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Triggers");
});

describe("a trigger", () => {
  it("is made with its secret shown once, listed, read, changed and deleted by a member, and read by a viewer", async () => {
    const template = await triggerTemplate(w);
    const made = await expectOk(
      call(triggersOf(w.project.id), {
        token: w.member.token,
        body: { template_id: template.id, name: "Issues to agents", kind: "github", github: { events: ["issues.labeled"], label: "agent" } },
      }),
      201,
    );
    const t = made.json;
    expect(t.secret).toMatch(/^whsec_/);
    expect(t.url).toMatch(new RegExp(`/hooks/triggers/${t.id}$`));
    expect(t).toMatchObject({ kind: "github", paused: false, parameters: {}, github: { events: ["issues.labeled"], label: "agent" } });

    const viewer = await createUser(w.admin, "viewer");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id, role: "viewer" } }), 201);
    const listed = (await expectOk(call(triggersOf(w.project.id), { token: viewer.token }))).json.triggers;
    const mine = listed.find((x: { id: string }) => x.id === t.id);
    expect(mine.name).toBe("Issues to agents");
    expect(mine.secret).toBeUndefined();
    const read = (await expectOk(call(`${triggersOf(w.project.id)}/${t.id}`, { token: viewer.token }))).json;
    expect(read.secret).toBeUndefined();
    expect(JSON.stringify(read)).not.toContain(t.secret);
    expectProblem(await call(triggersOf(w.project.id), { token: viewer.token, body: { template_id: template.id, kind: "http" } }), 403, "FORBIDDEN");
    expectProblem(await call(`${triggersOf(w.project.id)}/${t.id}`, { method: "PATCH", token: viewer.token, body: { paused: true } }), 403, "FORBIDDEN");

    const changed = await expectOk(
      call(`${triggersOf(w.project.id)}/${t.id}`, {
        method: "PATCH",
        token: w.member.token,
        body: { name: "Labelled issues", paused: true, parameters: { repo: "acme/api" }, github: { events: ["issues.labeled", "pull_request.opened"] } },
      }),
    );
    expect(changed.json).toMatchObject({
      name: "Labelled issues",
      paused: true,
      parameters: { repo: "acme/api" },
      github: { events: ["issues.labeled", "pull_request.opened"] },
    });
    expect(changed.json.secret).toBeUndefined();

    const rotated = await expectOk(call(`${triggersOf(w.project.id)}/${t.id}/secret`, { token: w.member.token, body: {} }));
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(t.secret);

    expect((await call(`${triggersOf(w.project.id)}/${t.id}`, { method: "DELETE", token: w.member.token })).status).toBe(204);
    expectProblem(await call(`${triggersOf(w.project.id)}/${t.id}`, { token: w.member.token }), 404, "NOT_FOUND");
  });

  it("is refused naming the field: another project's template, a rule on an http trigger, none on a github one, an unknown event, a parameter the template lacks", async () => {
    const template = await triggerTemplate(w);
    const other = await worldUnder(w.admin, "Triggers elsewhere");
    const foreign = await triggerTemplate(other);
    const bad = async (body: unknown, path: string) => {
      const reply = await call(triggersOf(w.project.id), { token: w.member.token, body });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    };
    await bad({ template_id: foreign.id, kind: "http" }, "template_id");
    await bad({ template_id: template.id, kind: "http", github: { events: ["issues.labeled"] } }, "github");
    await bad({ template_id: template.id, kind: "github" }, "github");
    await bad({ template_id: template.id, kind: "github", github: { events: ["push"] } }, "github.events.0");
    await bad(
      { template_id: template.id, kind: "github", github: { events: ["issues.labeled"], mapping: { ticket: "issue.number" } } },
      "github.mapping.ticket",
    );
    await bad({ template_id: template.id, kind: "http", parameters: { ticket: 1 } }, "parameters.ticket");
    await bad({ template_id: template.id, kind: "sms" }, "kind");
  });

  it("of another project is not found, read or changed through this one", async () => {
    const other = await worldUnder(w.admin, "Triggers hidden");
    const foreign = await triggerTemplate(other);
    const theirs = (await expectOk(call(triggersOf(other.project.id), { token: other.member.token, body: { template_id: foreign.id, kind: "http" } }), 201))
      .json;
    expectProblem(await call(`${triggersOf(w.project.id)}/${theirs.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`${triggersOf(w.project.id)}/${theirs.id}`, { method: "PATCH", token: w.member.token, body: { paused: true } }), 404, "NOT_FOUND");
    expectProblem(await call(`${triggersOf(w.project.id)}/${theirs.id}/secret`, { token: w.member.token, body: {} }), 404, "NOT_FOUND");
    expectProblem(await call(`${triggersOf(other.project.id)}`, { token: w.member.token }), 404, "NOT_FOUND");
    const mine = (await expectOk(call(triggersOf(w.project.id), { token: w.member.token }))).json.triggers.map((x: { id: string }) => x.id);
    expect(mine).not.toContain(theirs.id);
  });
});
