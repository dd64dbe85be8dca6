/**
 * subscriptions/listen (2026-07-28): a stream of the project's events, as the caller, on whatever isolate answers it.
 * Resources and tasks the caller cannot see are left out of the acknowledgement; a task followed by id is told in the
 * Tasks extension's shape until it ends; a person removed from the project hears nothing more, and the stream ends.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createUser, until } from "./helpers";
import { modernClient, modernPost, MODERN, TASKS } from "./mcp-client-v2";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP listen");
});

/** A raw listen stream: the JSON-RPC messages it carries, as they arrive, and whether it has ended. */
async function listening(credentials: Record<string, string>, notifications: Record<string, unknown>, capabilities: Record<string, unknown> = {}) {
  const res = await modernPost(credentials, "subscriptions/listen", { notifications }, { capabilities, id: "listen-1" });
  expect(res.headers.get("Content-Type")).toContain("text/event-stream");
  const messages: any[] = [];
  let ended = false;
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      buffer += value;
      for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
        const data = buffer
          .slice(0, cut)
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("");
        buffer = buffer.slice(cut + 2);
        if (data) messages.push(JSON.parse(data));
      }
    }
    ended = true;
  })();
  await until(
    () => messages,
    (m) => m.length > 0,
    "the acknowledgement",
  );
  return { messages, ended: () => ended, stop: () => reader.cancel() };
}

describe("subscriptions/listen", () => {
  it("the 2.x client hears its task and its board change, and what it may not see is not honoured", async () => {
    const { client } = await modernClient({ Authorization: `Bearer ${w.admin}` });
    const id = await newTask(w, { title: "Listened to" });
    const other = await newTask(w, { title: "Not listened to" });
    const task = `orchestratia://tasks/${id}`;
    const board = `orchestratia://projects/${w.project.id}/board`;
    const missing = `orchestratia://tasks/${crypto.randomUUID()}`;
    const updated: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (n) => void updated.push(n.params.uri));
    const subscription = await client.listen({ resourceSubscriptions: [task, missing] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([task]);

    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${other}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await until(
      () => updated,
      (u) => u.length > 0,
      "the task's notification",
    );
    expect(updated).toEqual([task]);
    await subscription.close();

    const boardSubscription = await client.listen({ resourceSubscriptions: [board] });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${other}/start`));
    await until(
      () => updated,
      (u) => u.includes(board),
      "the board's notification",
    );
    await boardSubscription.close();
    expect(await boardSubscription.closed).toBe("local");
    await client.close();
  });

  it("a task followed by id is told in the Tasks extension's shape, each change once and in order, until it is completed", async () => {
    const id = await newTask(w, { title: "Followed to the end" });
    const stream = await listening({ Authorization: `Bearer ${w.admin}` }, { taskIds: [id, crypto.randomUUID()] }, { extensions: { [TASKS]: {} } });
    expect(stream.messages[0]).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { taskIds: [id], resourceSubscriptions: [] }, _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } },
    });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "Which region?", intervention_type: "question" }));
    const tasks = () => stream.messages.filter((m) => m.method === "notifications/tasks").map((m) => m.params);
    // Each notification tells the task as it is when read: the question is answered once the client has heard it.
    await until(tasks, (t) => t.at(-1)?.status === "input_required", "the question's notification");
    const help = (await expectOk(call(`/api/v1/interventions?task_id=${id}`, { token: w.admin }))).json[0];
    await expectOk(call(`/api/v1/interventions/${help.id}/respond`, { token: w.admin, body: { response: "eu-west" } }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { $schema: "orchestratia/task-result/v1", summary: "Shipped" } }));
    await until(tasks, (t) => t.at(-1)?.status === "completed", "the completed notification");
    const told = tasks();
    expect(told.every((t) => t.taskId === id && t._meta["io.modelcontextprotocol/subscriptionId"] === "listen-1")).toBe(true);
    // No two notifications alike, and the statuses in the order they happened.
    expect(new Set(told.map((t) => JSON.stringify(t))).size).toBe(told.length);
    const statuses = told.map((t) => t.status).filter((s, i, all) => s !== all[i - 1]);
    expect(statuses).toEqual(["working", "input_required", "working", "completed"]);
    expect(told.find((t) => t.status === "input_required").statusMessage).toBe("Which region?");
    expect(told.at(-1).result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "Shipped" }] });
    await stream.stop();
  });

  it("without the Tasks extension, task ids are not honoured", async () => {
    const id = await newTask(w);
    const stream = await listening({ "X-API-Key": w.orchestrator.apiKey }, { taskIds: [id] });
    expect(stream.messages[0].params.notifications).toEqual({ resourceSubscriptions: [], taskIds: [] });
    await stream.stop();
  });

  it("a person removed from the project hears nothing more, and the stream ends gracefully", async () => {
    const member = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, member.id);
    const id = await newTask(w, { title: "Heard until removed" });
    const uri = `orchestratia://tasks/${id}`;
    const stream = await listening({ Authorization: `Bearer ${member.token}` }, { resourceSubscriptions: [uri] });
    expect(stream.messages[0].params.notifications.resourceSubscriptions).toEqual([uri]);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await until(
      () => stream.messages,
      (m) => m.some((x) => x.method === "notifications/resources/updated"),
      "the first notification",
    );
    await expectOk(call(`/api/v1/projects/${w.project.id}/members/${member.id}`, { method: "DELETE", token: w.admin }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await until(stream.ended, Boolean, "the stream's end");
    expect(stream.messages.filter((m) => m.method === "notifications/resources/updated")).toHaveLength(1);
    expect(stream.messages.at(-1)).toEqual({ jsonrpc: "2.0", id: "listen-1", result: { _meta: { "io.modelcontextprotocol/subscriptionId": "listen-1" } } });
  });

  it("a listen without its headers is refused as any 2026-07-28 request is", async () => {
    const res = await modernPost({ "X-API-Key": w.worker.apiKey }, "subscriptions/listen", { notifications: {} }, { headers: { "Mcp-Method": undefined } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32020);
  });

  it("a listen naming a revision the hub does not serve is refused naming the one it does, and a bad filter names its field", async () => {
    const credentials = { "X-API-Key": w.worker.apiKey };
    const future = "2099-01-01";
    const res = await modernPost(
      credentials,
      "subscriptions/listen",
      { notifications: {} },
      {
        headers: { "MCP-Protocol-Version": future },
        meta: { "io.modelcontextprotocol/protocolVersion": future },
      },
    );
    expect(((await res.json()) as { error: { code: number; data: { supported: string[] } } }).error).toMatchObject({
      code: -32022,
      data: { supported: [MODERN] },
    });
    const bad = await modernPost(credentials, "subscriptions/listen", { notifications: { taskIds: "all" } });
    expect(((await bad.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^notifications\.taskIds: /),
    });
  });
});
