/**
 * A Slack channel's lane end to end, against the fake Web API (test/slack-api-setup.ts): what a project's events post
 * where, in threads, updated in place when settled, paced and ordered through 429s, across a restart of the lane, and
 * what a revoked token, a removed or muted channel, or a channel's choice of events leaves unsent. Installations and
 * channels are written to D1 as the admin's routes write them; everything else goes through the API.
 */
import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call } from "./helpers";
import { refuseChannel } from "./slack";
import {
  actionIds,
  ask,
  blockText,
  buttonsOf,
  callsIn,
  gate,
  install,
  lane,
  outboxOf,
  postOf,
  postTo,
  posted,
  recorded,
  runningTask,
  unique,
  until,
  world,
} from "./slack-lane";
import { cli, expectOk, T } from "./task-world";

describe("posting a project's events to a channel", () => {
  it("posts an approval with Approve and Deny buttons, escaped, and updates it in place once answered through the API", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    const taskId = await runningTask(w, "Deploy <prod> & co");
    const ivId = await ask(w, taskId, "Ship <it> now?", "approval");
    const sent = await until(
      () => posted(channel),
      (c) => c.some((m) => actionIds(m).includes(`iv:${ivId}:y`)),
      "the approval",
    );
    const approval = sent.find((m) => actionIds(m).includes(`iv:${ivId}:y`))!;
    expect(approval.token).toBe(`xoxb-${team}-x`);
    expect(approval.params.thread_ts).toBeUndefined();
    expect(buttonsOf(approval).map((b: any) => [b.text.text, b.action_id, b.value])).toEqual([
      ["Approve", `iv:${ivId}:y`, `iv:${ivId}:y`],
      ["Deny", `iv:${ivId}:n`, `iv:${ivId}:n`],
    ]);
    expect(blockText(approval)).toContain("*Approval needed*");
    expect(blockText(approval)).toContain("Ship &lt;it&gt; now?");
    expect(blockText(approval)).toContain(`<https://hub.test/projects/${w.project.id}/tasks/${taskId}|Deploy &lt;prod&gt; &amp; co>`);
    expect(approval.params.text).toContain("Approval needed");

    const post = await recorded(team, channel, `iv:${ivId}`);
    expect(await postOf(team, channel, `task:${taskId}`)).toMatchObject({ ts: post.ts, thread_ts: null });
    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: w.member.token, body: { response: "approved" } }));
    const updates = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the update",
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]!.params.ts).toBe(post.ts);
    expect(buttonsOf(updates[0]!)).toEqual([]);
    expect(blockText(updates[0]!)).toContain("Ship &lt;it&gt; now?");
    expect(blockText(updates[0]!)).toContain(`Answered by ${w.member.email}: approved`);
  });

  it("keeps a task's messages in one thread: a free-text question opens it, its failure follows inside, and a retry settles the failure", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    const taskId = await runningTask(w, "Threaded");
    const ivId = await ask(w, taskId, "Which region?");
    const root = await recorded(team, channel, `task:${taskId}`);
    const question = (await posted(channel)).find((m) => m.params.text.includes("Question"))!;
    expect(actionIds(question)).toEqual([`it:${ivId}`]);
    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: w.member.token, body: { response: "eu-west" } }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/fail`, { error: "disk <full>" }));
    const failure = await recorded(team, channel, `fail:${taskId}`);
    expect(failure.thread_ts).toBe(root.ts);
    const failed = (await posted(channel)).find((m) => actionIds(m).includes(`rt:${taskId}`))!;
    expect(failed.params).toMatchObject({ thread_ts: root.ts, reply_broadcast: "false" });
    expect(blockText(failed)).toContain("disk &lt;full&gt;");

    await expectOk(call(`/api/v1/tasks/${taskId}/retry`, { method: "POST", token: w.member.token }));
    const updates = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length >= 2,
      "the question answered and the failure retried",
    );
    expect(updates.map((u) => u.params.ts)).toEqual([root.ts, failure.ts]);
    expect(blockText(updates[0]!)).toContain(`Answered by ${w.member.email}: eu-west`);
    expect(blockText(updates[1]!)).toContain(`Retried by ${w.member.email}`);
    expect(buttonsOf(updates[1]!)).toEqual([]);
    // One root: everything after it went into its thread.
    expect((await posted(channel)).filter((m) => m.params.thread_ts === undefined)).toHaveLength(1);
  });
  it("posts a message already settled when it was answered before it could be posted", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    await refuseChannel(channel, { times: 1, status: 429, error: "ratelimited", retry_after: 1 });
    const taskId = await runningTask(w, "Answered early");
    const ivId = await ask(w, taskId, "Go ahead?", "approval");
    await until(
      () => callsIn(channel),
      (c) => c.some((m) => m.refused === "ratelimited"),
      "the refused post",
    );
    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: w.member.token, body: { response: "approved" } }));
    await recorded(team, channel, `iv:${ivId}`);
    const sent = (await posted(channel)).filter((m) => !m.refused);
    expect(sent).toHaveLength(1);
    expect(buttonsOf(sent[0]!)).toEqual([]);
    expect(blockText(sent[0]!)).toContain("Go ahead?");
    expect(blockText(sent[0]!)).toContain(`Answered by ${w.member.email}: approved`);
  });
});

describe("a task that ends", () => {
  it("settles its question still asking when a person cancels the task: no buttons, saying who cancelled it", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    const taskId = await runningTask(w, "Called off");
    const ivId = await ask(w, taskId, "Which way?");
    const post = await recorded(team, channel, `iv:${ivId}`);
    await expectOk(call(`/api/v1/tasks/${taskId}`, { method: "DELETE", token: w.member.token }));
    const updates = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the question settled",
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]!.params.ts).toBe(post.ts);
    expect(buttonsOf(updates[0]!)).toEqual([]);
    expect(blockText(updates[0]!)).toContain("Which way?");
    expect(blockText(updates[0]!)).toContain(`Task cancelled by ${w.member.email}`);
  });

  it("keeps an answered approval's words when its task completes afterwards", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    const taskId = await runningTask(w, "Answered then done");
    const ivId = await ask(w, taskId, "Merge it?", "approval");
    await recorded(team, channel, `iv:${ivId}`);
    await expectOk(call(`/api/v1/interventions/${ivId}/respond`, { token: w.member.token, body: { response: "approved" } }));
    await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the approval answered",
    );
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/complete`, { result: "Merged" }));
    await until(
      () => outboxOf(team, channel),
      (r) => r.some((row) => row.event_type === "task_completed" && row.status === "delivered"),
      "the completion delivered",
    );
    const updates = await callsIn(channel, "chat.update");
    expect(updates).toHaveLength(1);
    expect(blockText(updates[0]!)).toContain(`Answered by ${w.member.email}: approved`);
    expect(blockText(updates[0]!)).not.toContain("Task done");
    // The completion itself is still posted, in the task's thread.
    expect((await posted(channel)).map((m) => m.params.text)).toEqual([expect.stringContaining("Approval needed"), expect.stringContaining("done")]);
  });

  it("settles the question of a channel that picked only questions when the task fails, posting no failure there", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team, { events: ["intervention_requested", "task_awaiting_approval"] });
    const taskId = await runningTask(w, "Failing quietly");
    const ivId = await ask(w, taskId, "Try the mirror?");
    const post = await recorded(team, channel, `iv:${ivId}`);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/fail`, { error: "no route" }));
    const updates = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the question settled",
    );
    expect(updates[0]!.params.ts).toBe(post.ts);
    expect(buttonsOf(updates[0]!)).toEqual([]);
    expect(blockText(updates[0]!)).toContain("Task failed");
    expect(await posted(channel)).toHaveLength(1);
    expect((await outboxOf(team, channel)).map((r) => [r.event_type, r.status])).toEqual([
      ["intervention_requested", "delivered"],
      ["task_failed", "delivered"],
    ]);
  });
});

describe("what a channel asked for", () => {
  it("posts only the events a channel picked, and nothing to a muted one", async () => {
    const w = await world();
    const team = await install();
    const failures = await postTo(w, team, { events: ["task_failed"] });
    const muted = await postTo(w, team, { muted: true });
    const everything = await postTo(w, team);
    const taskId = await runningTask(w, "Picky");
    await ask(w, taskId, "Anything?");
    const other = await runningTask(w, "Failing");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${other}/fail`, { error: "boom" }));
    await until(
      () => posted(everything),
      (c) => c.length >= 2,
      "both messages in the channel that takes everything",
    );
    const got = await until(
      () => posted(failures),
      (c) => c.length >= 1,
      "the failure",
    );
    expect(got.map((m) => actionIds(m))).toEqual([[`rt:${other}`]]);
    expect(await outboxOf(team, failures)).toEqual([expect.objectContaining({ event_type: "task_failed", status: "delivered" })]);
    expect(await outboxOf(team, muted)).toEqual([]);
    expect(await posted(muted)).toEqual([]);
  });

  it("posts none of what waited for a channel removed, muted or asking for other events since", async () => {
    const w = await world();
    const team = await install();
    const [removed, muted, narrowed] = [await postTo(w, team), await postTo(w, team), await postTo(w, team)];
    for (const channel of [removed, muted, narrowed]) await refuseChannel(channel, { times: 1, status: 429, error: "ratelimited", retry_after: 2 });
    const taskId = await runningTask(w, "Held");
    await ask(w, taskId, "Still there?");
    for (const channel of [removed, muted, narrowed])
      await until(
        () => callsIn(channel),
        (c) => c.some((m) => m.refused === "ratelimited"),
        "the refused post",
      );
    await env.DB.batch([
      env.DB.prepare("DELETE FROM slack_channels WHERE channel_id = ?1").bind(removed),
      env.DB.prepare("UPDATE slack_channels SET muted = 1 WHERE channel_id = ?1").bind(muted),
      env.DB.prepare("UPDATE slack_channels SET events = '[\"task_failed\"]' WHERE channel_id = ?1").bind(narrowed),
    ]);
    const reasons = {
      [removed]: "not sent: the project no longer posts to this channel",
      [muted]: "not sent: the channel is muted",
      [narrowed]: "not sent: the channel no longer asks for intervention_requested",
    };
    for (const [channel, reason] of Object.entries(reasons)) {
      const rows = await until(
        () => outboxOf(team, channel),
        (r) => r.every((row) => row.status !== "pending"),
        `the rows of ${channel} settled`,
      );
      expect(rows).toEqual([{ event_type: "intervention_requested", status: "failed", last_error: reason }]);
      expect(await callsIn(channel)).toHaveLength(1);
    }
  });
});

describe("delivery", () => {
  it("waits as long as Slack says after a 429, holding what follows, then posts everything in order", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    await gate(w, true);
    await refuseChannel(channel, { times: 1, status: 429, error: "ratelimited", retry_after: 2 });
    const ids: string[] = [];
    for (const title of ["first", "second", "third"])
      ids.push((await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201)).json.id);
    const calls = await until(
      () => posted(channel),
      (c) => c.filter((m) => !m.refused).length >= 3,
      "all three posted",
    );
    expect(calls[0]!.refused).toBe("ratelimited");
    expect(calls.slice(1).every((m) => !m.refused)).toBe(true);
    // Slack's 2 s before anything else was tried, not the 1 s pace nor the 5 s retry schedule.
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(calls[1]!.at - calls[0]!.at).toBeLessThan(4500);
    expect(calls.map((m) => actionIds(m)[0])).toEqual([`ap:${ids[0]}`, ...ids.map((id) => `ap:${id}`)]);
    // Paced: a second apart at least.
    expect(calls[3]!.at - calls[2]!.at).toBeGreaterThanOrEqual(950);
  });

  it("tries again, in order, a post Slack failed with a transient error answered with 200", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    await gate(w, true);
    await refuseChannel(channel, { times: 1, status: 200, error: "internal_error" });
    const ids: string[] = [];
    for (const title of ["one", "two"]) ids.push((await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201)).json.id);
    const calls = await until(
      () => posted(channel),
      (c) => c.filter((m) => !m.refused).length >= 2,
      "both posted",
      20_000,
    );
    expect(calls.map((m) => [actionIds(m)[0], m.refused ?? null])).toEqual([
      [`ap:${ids[0]}`, "internal_error"],
      [`ap:${ids[0]}`, null],
      [`ap:${ids[1]}`, null],
    ]);
    expect((await outboxOf(team, channel)).map((r) => r.status)).toEqual(["delivered", "delivered"]);
  }, 30_000);

  it("loses nothing and posts nothing twice when the lane restarts between deliveries", async () => {
    const w = await world();
    const team = await install();
    const channel = await postTo(w, team);
    await gate(w, true);
    const first = (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "before", project_id: w.project.id }), 201)).json.id;
    const second = (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "after", project_id: w.project.id }), 201)).json.id;
    const root = await recorded(team, channel, `task:${first}`);
    // The second waits its turn (the pace) when the lane goes.
    expect((await outboxOf(team, channel)).map((r) => r.status)).toEqual(["delivered", "pending"]);
    await evictDurableObject(lane(team, channel));
    await lane(team, channel).wake();
    await recorded(team, channel, `task:${second}`);
    await expectOk(call(`/api/v1/tasks/${first}/approve`, { method: "POST", token: w.member.token }));
    const update = await until(
      () => callsIn(channel, "chat.update"),
      (c) => c.length > 0,
      "the approval settled",
    );
    // What the lane keeps is in D1: the message it posted before the restart is the one updated.
    expect(update[0]!.params.ts).toBe(root.ts);
    expect(blockText(update[0]!)).toContain(`Approved by ${w.member.email}`);
    const posts = await posted(channel);
    expect(posts.map((m) => actionIds(m)[0])).toEqual([`ap:${first}`, `ap:${second}`]);
    expect((await outboxOf(team, channel)).map((r) => r.status)).toEqual(["delivered", "delivered", "delivered"]);
  });

  it("forgets a workspace whose token was revoked, with what its channels waited for", async () => {
    const w = await world();
    const team = await install(() => "xoxb-revoked-x");
    const channel = await postTo(w, team);
    const taskId = await runningTask(w, "Revoked");
    await ask(w, taskId, "Hello?");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question: "Anyone?" }));
    await until(
      () => env.DB.prepare("SELECT COUNT(*) AS n FROM slack_installations WHERE team_id = ?1").bind(team).first<{ n: number }>(),
      (r) => r!.n === 0,
      "the installation forgotten",
    );
    expect(await callsIn(channel)).toEqual([expect.objectContaining({ method: "chat.postMessage", refused: "invalid_auth" })]);
    expect((await outboxOf(team, channel)).filter((r) => r.status === "pending")).toEqual([]);
  });

  it("posts nothing for a workspace not installed, and gives up on a channel Slack says is gone", async () => {
    const w = await world();
    const channel = await postTo(w, `T${unique()}`);
    const team = await install();
    const gone = await postTo(w, team);
    await refuseChannel(gone, { times: 1, status: 200, error: "channel_not_found" });
    const taskId = await runningTask(w, "Nowhere");
    await ask(w, taskId, "Where?");
    const teamOf = (await env.DB.prepare("SELECT team_id FROM slack_channels WHERE channel_id = ?1").bind(channel).first<{ team_id: string }>())!.team_id;
    const rows = await until(
      () => outboxOf(teamOf, channel),
      (r) => r.length > 0 && r.every((row) => row.status !== "pending"),
      "the rows given up",
    );
    expect(rows.every((r) => r.status === "failed" && r.last_error === "not sent: the workspace is not installed")).toBe(true);
    expect(await callsIn(channel)).toEqual([]);
    const goneRows = await until(
      () => outboxOf(team, gone),
      (r) => r.length > 0 && r.every((row) => row.status !== "pending"),
      "the gone channel's rows given up",
    );
    expect(goneRows[0]).toMatchObject({ status: "failed", last_error: "channel_not_found" });
    expect(await callsIn(gone)).toHaveLength(1);
  });
});
