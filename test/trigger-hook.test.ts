/**
 * A trigger's door, `POST /hooks/triggers/{id}` (API.md "Templates, schedules and triggers"): verified first (bearer,
 * Standard Webhooks, GitHub's X-Hub-Signature-256), then parsed; each delivery id makes one run, however often and
 * however concurrently it arrives.
 */
import { sign } from "@octokit/webhooks-methods";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem } from "./helpers";
import { commentCreated, issueLabeled, ping, pullRequestOpened } from "./github-payloads";
import { createWorld, expectOk, worldUnder, type World } from "./task-world";
import { githubDelivery, hook, newTrigger, runsOf, standardSigned, taskOf, triggersOf } from "./trigger-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Trigger door");
});

const bearer = (secret: string) => ({ Authorization: `Bearer ${secret}` });
const firing = (parameters: Record<string, unknown>) => JSON.stringify({ parameters });

function expectRefused(reply: { status: number; json: any; headers: Headers }) {
  expect(reply.status, JSON.stringify(reply.json)).toBe(401);
  expect(reply.headers.get("Content-Type")).toBe("application/problem+json");
  expect(reply.json.detail).toBe("The call's secret or signature does not verify");
}

describe("an http trigger", () => {
  it("fires once per call with its bearer secret, and once per Idempotency-Key", async () => {
    const t = await newTrigger(w, "http", { name: "deploy hook", parameters: { repo: "acme/api" } });
    const first = await hook(t.id, firing({ title: "Deploy 1.2", number: 12 }), bearer(t.secret));
    expect(first.status, first.text).toBe(201);
    expect(first.json.task_ids).toHaveLength(2);
    const work = await taskOf(w, first.json.task_ids[0]);
    expect(work.title).toBe("Deploy 1.2 (#12)");
    expect(work.spec).toContain("in acme/api");
    const second = await hook(t.id, firing({ title: "Deploy 1.2", number: 12 }), bearer(t.secret));
    expect(second.status).toBe(201);
    expect(second.json.run_id).not.toBe(first.json.run_id);

    const keyed = await hook(t.id, firing({ title: "Deploy 1.3" }), { ...bearer(t.secret), "Idempotency-Key": "deploy-1.3" });
    expect(keyed.status).toBe(201);
    const again = await hook(t.id, firing({ title: "Deploy 1.3" }), { ...bearer(t.secret), "Idempotency-Key": "deploy-1.3" });
    expect(again.status).toBe(200);
    expect(again.json).toEqual({ run_id: keyed.json.run_id, task_ids: keyed.json.task_ids, repeated: true });
    const runs = await runsOf(w, t.id);
    expect(runs).toHaveLength(3);
    expect(runs[0]).toMatchObject({ source: "trigger", delivery_id: "deploy-1.3", created_by: "trigger:deploy hook" });
    expect(runs[0]!.parameters).toMatchObject({ title: "Deploy 1.3", repo: "acme/api" });
  });

  it("fires on a Standard Webhooks signature made by the library, once per webhook-id; an old timestamp or a tampered body is 401", async () => {
    const t = await newTrigger(w, "http");
    const signed = standardSigned(t.secret, { title: "Nightly import" });
    const first = await hook(t.id, signed.body, signed.headers);
    expect(first.status, first.text).toBe(201);
    const again = await hook(t.id, signed.body, signed.headers);
    expect(again.status).toBe(200);
    expect(again.json.run_id).toBe(first.json.run_id);
    expect((await runsOf(w, t.id))[0]!.delivery_id).toBe(signed.headers["webhook-id"]);

    const old = standardSigned(t.secret, { title: "Stale" }, undefined, new Date(Date.now() - 10 * 60_000));
    expectRefused(await hook(t.id, old.body, old.headers));
    const fresh = standardSigned(t.secret, { title: "Fresh" });
    expectRefused(await hook(t.id, fresh.body.replace("Fresh", "Forged"), fresh.headers));
    const otherKey = standardSigned("whsec_" + btoa("another secret of 24 bytes"), { title: "Fresh" });
    expectRefused(await hook(t.id, otherKey.body, otherKey.headers));
    expect(await runsOf(w, t.id)).toHaveLength(1);
  });

  it("refuses a missing or wrong secret with 401, an unknown trigger with 404, and names the parameter the template refuses", async () => {
    const t = await newTrigger(w, "http");
    expectRefused(await hook(t.id, firing({ title: "x" })));
    expectRefused(await hook(t.id, firing({ title: "x" }), bearer(t.secret + "x")));
    expectRefused(await hook(t.id, firing({ title: "x" }), { Authorization: t.secret }));
    expectProblem(await call(`/hooks/triggers/${crypto.randomUUID()}`, { raw: firing({}), headers: bearer(t.secret) }), 404, "NOT_FOUND");

    const unknown = await hook(t.id, firing({ title: "x", ticket: 7 }), bearer(t.secret));
    expect(unknown.status).toBe(422);
    expect(unknown.json.errors.map((e: { path: string }) => e.path)).toContain("parameters.ticket");
    const missing = await hook(t.id, firing({ number: 3 }), bearer(t.secret));
    expect(missing.status).toBe(422);
    expect(missing.json.errors.map((e: { path: string }) => e.path)).toContain("parameters.title");
    expect(await runsOf(w, t.id)).toHaveLength(0);
  });

  it("stops taking the old secret once rotated, and a paused one fires nothing", async () => {
    const t = await newTrigger(w, "http");
    const rotated = (await expectOk(call(`${triggersOf(w.project.id)}/${t.id}/secret`, { token: w.member.token, body: {} }))).json.secret;
    expectRefused(await hook(t.id, firing({ title: "old" }), bearer(t.secret)));
    expect((await hook(t.id, firing({ title: "new" }), bearer(rotated))).status).toBe(201);

    await expectOk(call(`${triggersOf(w.project.id)}/${t.id}`, { method: "PATCH", token: w.member.token, body: { paused: true } }));
    const paused = await hook(t.id, firing({ title: "while paused" }), bearer(rotated));
    expect(paused.status).toBe(409);
    expect(paused.json.code).toBe("TRIGGER_PAUSED");
    // A caller without the secret learns nothing of it, paused or not.
    expectRefused(await hook(t.id, firing({ title: "while paused" }), bearer(t.secret)));
    expect(await runsOf(w, t.id)).toHaveLength(1);
  });

  it("refuses a body over 1 MiB with 413, declared or streamed, and makes nothing", async () => {
    const t = await newTrigger(w, "http");
    const big = firing({ title: "x".repeat(1024 * 1024) });
    const declared = await hook(t.id, big, { ...bearer(t.secret), "Content-Length": String(big.length) });
    expect(declared.status).toBe(413);
    const bytes = new TextEncoder().encode(big);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
        controller.close();
      },
    });
    const chunked = await hook(t.id, streamed, bearer(t.secret));
    expect(chunked.status).toBe(413);
    expect(chunked.json.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await runsOf(w, t.id)).toHaveLength(0);
  });

  it("of another project does not fire with this project's secret, nor show there", async () => {
    const mine = await newTrigger(w, "http");
    const other = await worldUnder(w.admin, "Trigger door elsewhere");
    const theirs = await newTrigger(other, "http");
    expectRefused(await hook(theirs.id, firing({ title: "cross" }), bearer(mine.secret)));
    expect(await runsOf(other, theirs.id)).toHaveLength(0);
    const fired = await hook(theirs.id, firing({ title: "theirs" }), bearer(theirs.secret));
    expect(fired.status).toBe(201);
    expect(await runsOf(w, theirs.id)).toHaveLength(0);
    expectProblem(await call(`/api/v1/tasks/${fired.json.task_ids[0]}`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});

describe("a github trigger", () => {
  const labelled = (number: number) => issueLabeled({ number, title: "Spelling error in the README file", body: "It says 'committ'.", label: "agent" });

  it("makes a task graph once from a signed issues.labeled delivery; the same delivery again makes nothing; a tampered one is 401", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["issues.labeled"], label: "agent" } });
    const pong = await githubDelivery(t.id, t.secret, "ping", ping());
    expect(pong.status).toBe(200);
    expect(pong.json).toEqual({ ping: true });

    const delivery = crypto.randomUUID();
    const first = await githubDelivery(t.id, t.secret, "issues", labelled(41), delivery);
    expect(first.status, first.text).toBe(201);
    const [work, review] = await Promise.all(first.json.task_ids.map((id: string) => taskOf(w, id)));
    expect(work.title).toBe("Spelling error in the README file (#41)");
    expect(work.spec).toContain("From Codertocat on - in Codertocat/Hello-World: https://github.com/Codertocat/Hello-World/issues/41");
    expect(work.spec).toContain("It says 'committ'.");
    expect(review.title).toBe("Review #41");

    const replay = await githubDelivery(t.id, t.secret, "issues", labelled(41), delivery);
    expect(replay.status).toBe(200);
    expect(replay.json).toEqual({ run_id: first.json.run_id, task_ids: first.json.task_ids, repeated: true });
    const tampered = await githubDelivery(t.id, t.secret, "issues", labelled(42), crypto.randomUUID(), (body) =>
      body.replace("#42", "#43").replace('"number":42', '"number":43'),
    );
    expectRefused(tampered);
    expectRefused(await githubDelivery(t.id, "another secret", "issues", labelled(44)));
    const runs = await runsOf(w, t.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ delivery_id: delivery, parameters: { title: "Spelling error in the README file", number: 41 } });
  });

  it("takes only its label, its command and its events, answering the rest 202 with why", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["issues.labeled", "issue_comment.created"], label: "agent", command: "/agent" } });
    const otherLabel = await githubDelivery(t.id, t.secret, "issues", issueLabeled({ number: 5, title: "Docs", label: "bug" }));
    expect(otherLabel.status).toBe(202);
    expect(otherLabel.json.ignored).toBe('the label added is not "agent"');
    const chatter = await githubDelivery(
      t.id,
      t.secret,
      "issue_comment",
      commentCreated({ number: 6, title: "Add caching", comment: "Looks good to me", by: "octocat" }),
    );
    expect(chatter.status).toBe(202);
    expect(chatter.json.ignored).toBe("the comment does not start with /agent");
    const lookalike = await githubDelivery(
      t.id,
      t.secret,
      "issue_comment",
      commentCreated({ number: 6, title: "Add caching", comment: "/agents please", by: "octocat" }),
    );
    expect(lookalike.status).toBe(202);
    const opened = await githubDelivery(t.id, t.secret, "pull_request", pullRequestOpened({ number: 7, title: "x", body: null, branch: "b", by: "octocat" }));
    expect(opened.status).toBe(202);
    expect(opened.json.ignored).toContain("does not take pull_request.opened");
    expect(await runsOf(w, t.id)).toHaveLength(0);

    const asked = await githubDelivery(
      t.id,
      t.secret,
      "issue_comment",
      commentCreated({ number: 8, title: "Add caching to the API", comment: "/agent add a test for the cache expiry", by: "hubot", onPullRequest: true }),
    );
    expect(asked.status, asked.text).toBe(201);
    const work = await taskOf(w, asked.json.task_ids[0]);
    expect(work.title).toBe("Add caching to the API (#8)");
    expect(work.spec).toContain("From hubot on - in Codertocat/Hello-World: https://github.com/Codertocat/Hello-World/pull/8#issuecomment-492700400");
    expect(work.spec).toContain("Asked: add a test for the cache expiry");
  });

  it("reads parameters from a pull_request.opened by default and through its mapping", async () => {
    const plain = await newTrigger(w, "github", { github: { events: ["pull_request.opened"] } });
    const pr = pullRequestOpened({
      number: 15,
      title: "Update the README with new information",
      body: "This is a pretty simple change.",
      branch: "readme-update",
      by: "octocat",
    });
    const fired = await githubDelivery(plain.id, plain.secret, "pull_request", pr);
    expect(fired.status, fired.text).toBe(201);
    const work = await taskOf(w, fired.json.task_ids[0]);
    expect(work.title).toBe("Update the README with new information (#15)");
    expect(work.spec).toBe(
      "From octocat on readme-update in Codertocat/Hello-World: https://github.com/Codertocat/Hello-World/pull/15\n\nThis is a pretty simple change.\n\nAsked: ",
    );

    const mapped = await newTrigger(w, "github", {
      parameters: { author: "nobody" },
      github: {
        events: ["pull_request.opened"],
        mapping: {
          title: "pull_request.head.label",
          body: "pull_request.base.ref",
          number: "pull_request.id",
          author: "sender.html_url",
          url: "repository.url",
        },
      },
    });
    const viaMapping = await githubDelivery(mapped.id, mapped.secret, "pull_request", pr);
    expect(viaMapping.status, viaMapping.text).toBe(201);
    const mappedWork = await taskOf(w, viaMapping.json.task_ids[0]);
    expect(mappedWork.title).toBe("Codertocat:readme-update (#279147437)");
    expect(mappedWork.spec).toBe(
      "From https://github.com/octocat on readme-update in Codertocat/Hello-World: https://api.github.com/repos/Codertocat/Hello-World\n\nmain\n\nAsked: ",
    );
  });

  it("answers 422 naming the parameter when a mapping reads what the template cannot take", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["pull_request.opened"], mapping: { title: "pull_request.head" } } });
    const reply = await githubDelivery(t.id, t.secret, "pull_request", pullRequestOpened({ number: 3, title: "t", body: null, branch: "b", by: "o" }));
    expect(reply.status).toBe(422);
    expect(reply.json.errors).toEqual([{ path: "parameters.title", message: "must be a string" }]);
    expect(await runsOf(w, t.id)).toHaveLength(0);
  });

  it("makes one run from 20 concurrent copies of one delivery", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["issues.labeled"] } });
    const delivery = crypto.randomUUID();
    const replies = await Promise.all(Array.from({ length: 20 }, () => githubDelivery(t.id, t.secret, "issues", labelled(77), delivery)));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201]);
    expect(new Set(replies.map((r) => r.json.run_id)).size).toBe(1);
    const runs = await runsOf(w, t.id);
    expect(runs).toHaveLength(1);
    const tasks = (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }))).json.tasks;
    expect(tasks.filter((x: { run_id?: string; title: string }) => x.title.endsWith("(#77)"))).toHaveLength(1);
  });

  it("reads a delivery sent with GitHub's form content type, its signature over the form body", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["issues.labeled"] } });
    const body = `payload=${encodeURIComponent(JSON.stringify(labelled(55)))}`;
    const headers = { "Content-Type": "application/x-www-form-urlencoded", "X-GitHub-Event": "issues", "X-GitHub-Delivery": crypto.randomUUID() };
    const fired = await hook(t.id, body, { ...headers, "X-Hub-Signature-256": await sign(t.secret, body) });
    expect(fired.status, fired.text).toBe(201);
    expect((await taskOf(w, fired.json.task_ids[0])).title).toBe("Spelling error in the README file (#55)");
    expectRefused(await hook(t.id, body.replace("55", "56"), { ...headers, "X-Hub-Signature-256": await sign(t.secret, body) }));
  });

  it("that is paused fires nothing, and still answers GitHub's ping", async () => {
    const t = await newTrigger(w, "github", { github: { events: ["issues.labeled"] } });
    await expectOk(call(`${triggersOf(w.project.id)}/${t.id}`, { method: "PATCH", token: w.member.token, body: { paused: true } }));
    expect((await githubDelivery(t.id, t.secret, "ping", ping())).status).toBe(200);
    const reply = await githubDelivery(t.id, t.secret, "issues", labelled(90));
    expect(reply.status).toBe(409);
    expect(reply.json.code).toBe("TRIGGER_PAUSED");
    expect(await runsOf(w, t.id)).toHaveLength(0);
  });
});

describe("USING.md's GitHub trigger", () => {
  it("holds: the template and trigger as written there make the fix and review tasks from a labelled issue, once", async () => {
    const template = (
      await expectOk(
        call(`/api/v1/projects/${w.project.id}/templates`, {
          token: w.member.token,
          body: {
            name: "fix-issue",
            parameters: [
              { name: "title", type: "string", required: true },
              { name: "number", type: "number", required: true },
              { name: "url", type: "string", required: true },
              { name: "body", type: "string", default: "" },
              { name: "author", type: "string", default: "someone" },
              { name: "repo", type: "string", default: "acme/api" },
              { name: "milestone", type: "string", default: "none" },
            ],
            tasks: [
              {
                key: "fix",
                title: "Fix #{{number}}: {{title}}",
                target_repo: "{{repo}}",
                spec: "{{author}} reported {{url}} (milestone: {{milestone}}):\n\n{{body}}",
                requirements: { languages: ["typescript"] },
              },
              { key: "review", title: "Review the fix for #{{number}}", dependencies: [{ on: "fix", dependency_type: "blocks" }] },
            ],
          },
        }),
        201,
      )
    ).json;
    const t = (
      await expectOk(
        call(triggersOf(w.project.id), {
          token: w.member.token,
          body: {
            template_id: template.id,
            name: "agent-labelled issues",
            kind: "github",
            github: { events: ["issues.labeled"], label: "agent", mapping: { milestone: "issue.milestone.title" } },
          },
        }),
        201,
      )
    ).json;
    expect((await githubDelivery(t.id, t.secret, "ping", ping())).status).toBe(200);
    const delivery = crypto.randomUUID();
    const payload = issueLabeled({ number: 31, title: "Login fails with a + in the email", body: "Steps: sign up as a+b@example.com.", label: "agent" });
    const fired = await githubDelivery(t.id, t.secret, "issues", payload, delivery);
    expect(fired.status, fired.text).toBe(201);
    const [fix, review] = await Promise.all(fired.json.task_ids.map((id: string) => taskOf(w, id)));
    expect(fix).toMatchObject({
      title: "Fix #31: Login fails with a + in the email",
      target_repo: "Codertocat/Hello-World",
      spec: "Codertocat reported https://github.com/Codertocat/Hello-World/issues/31 (milestone: none):\n\nSteps: sign up as a+b@example.com.",
      requirements: { languages: ["typescript"] },
    });
    expect(review).toMatchObject({ title: "Review the fix for #31", blocked: true });
    const other = await githubDelivery(t.id, t.secret, "issues", issueLabeled({ number: 32, title: "x", label: "bug" }));
    expect(other.json).toEqual({ ignored: 'the label added is not "agent"' });
    expect((await githubDelivery(t.id, t.secret, "issues", payload, delivery)).json).toMatchObject({ run_id: fired.json.run_id, repeated: true });
    expect(await runsOf(w, t.id)).toHaveLength(1);
  });
});
