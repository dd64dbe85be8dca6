/**
 * JSON nested thousands deep, on every surface that takes JSON: refused with
 * a 422 (or a socket error) naming the field, never a 500 or a dropped
 * socket. The depth check itself never recurses.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, tooDeepUnder } from "../src/domain/json-depth";
import { call, expectProblem } from "./helpers";
import { fakeDaemon } from "./fake-daemon";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, T, taskIn, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Deep JSON");
});

/** `{"a": {"a": ... 1 ...}}`, `depth` objects deep, as JSON text (never built as a value, which would need recursion to print). */
const nested = (depth: number) => `${'{"a": '.repeat(depth)}1${"}".repeat(depth)}`;
/** A task spec with `nested(depth)` in constraints.custom: in a body, that is `depth + 3` deep (the body, the spec, its constraints). */
const spec = (depth: number) =>
  `{"$schema": "orchestratia/task-spec/v1", "requirements": [{"description": "x", "priority": "must"}], "constraints": {"custom": ${nested(depth)}}}`;
const body = (fields: Record<string, string | unknown>) =>
  `{${Object.entries(fields)
    .map(([k, v]) => `${JSON.stringify(k)}: ${typeof v === "string" && /^[[{]/.test(v) ? v : JSON.stringify(v)}`)
    .join(", ")}}`;

describe("the depth check", () => {
  it("names the top-level member holding the deepest nesting, at any depth, without recursing", () => {
    expect(tooDeepUnder(JSON.parse(body({ ok: nested(3), deep: nested(MAX_JSON_DEPTH) })))).toBe("deep");
    expect(tooDeepUnder(JSON.parse(body({ deep: nested(MAX_JSON_DEPTH - 1) })))).toBeNull();
    const million = JSON.parse(`[0, ${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}]`);
    expect(tooDeepUnder(million)).toBe("1");
    expect(tooDeepUnder("text")).toBeNull();
  });
});

describe("HTTP bodies", () => {
  it("refuses a structured_spec nested 3,000 deep with 422 naming it, and takes one just inside the limit", async () => {
    const create = (depth: number) =>
      call("/api/v1/tasks", {
        token: w.member.token,
        raw: body({ title: `Spec ${depth} deep`, project_id: w.project.id, structured_spec: spec(depth) }),
        headers: { "Content-Type": "application/json" },
      });
    const deep = await create(3000);
    expectProblem(deep, 422, "VALIDATION_FAILED");
    expect(deep.json.errors).toEqual([{ path: "structured_spec", message: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} deep` }]);
    await expectOk(create(MAX_JSON_DEPTH - 3), 201);
    expectProblem(await create(MAX_JSON_DEPTH - 2), 422, "VALIDATION_FAILED");
  });

  it("refuses a result nested 3,000 deep from an agent, and the task is left as it was", async () => {
    const { id } = await taskIn(w, "running");
    const deep = await call(`${T}/${id}/complete`, {
      apiKey: w.worker.apiKey,
      raw: body({ result: nested(3000) }),
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(deep, 422, "VALIDATION_FAILED");
    expect(deep.json.errors[0].path).toBe("result");
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}`))).json.status).toBe("running");
  });

  it("refuses a task-format payload nested 3,000 deep", async () => {
    const deep = await call(T, {
      apiKey: w.orchestrator.apiKey,
      raw: body({ id: crypto.randomUUID(), type: "parse_recipe", project_id: w.project.id, payload: nested(3000) }),
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(deep, 422, "VALIDATION_FAILED");
    expect(deep.json.errors[0].path).toBe("payload");
  });

  it("refuses a deep body on a route that takes any JSON, as arrays too", async () => {
    const deep = await call(`/api/v1/projects/${w.project.id}/webhooks`, {
      token: w.member.token,
      raw: `{"url": "https://example.com/hook", "events": ${"[".repeat(5000)}${"]".repeat(5000)}}`,
      headers: { "Content-Type": "application/json" },
    });
    expectProblem(deep, 422, "VALIDATION_FAILED");
    expect(deep.json.errors[0].path).toBe("events");
  });
});

describe("socket frames", () => {
  it("answers a deep frame on the agent socket with an error naming payload, and the socket goes on", async () => {
    const s = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": w.orchestrator.apiKey });
    s.send(`{"type": "request:submit-task", "id": "deep-1", "payload": {"name": "Deep", "payload": ${nested(5000)}}}`);
    const refused = await s.next((f) => f.correlationId === "deep-1");
    expect(refused).toMatchObject({ type: "response:error", error: { code: "INVALID_REQUEST", details: [{ path: "payload" }] } });
    s.send({ type: "request:submit-task", id: "shallow-1", payload: { name: "Shallow" } });
    expect(await s.next((f) => f.correlationId === "shallow-1")).toMatchObject({ type: "response:success" });
  });

  it("answers a deep frame from the daemon with an error, and the daemon stays connected", async () => {
    const daemon = await fakeDaemon(w.worker.apiKey);
    daemon.socket.send(`{"type": "session_screen", "session_id": "${crypto.randomUUID()}", "lines": ${"[".repeat(5000)}${"]".repeat(5000)}}`);
    expect(await daemon.socket.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_MESSAGE", detail: expect.stringContaining("lines") });
    daemon.send({ type: "ping" });
    expect(await daemon.socket.next((f) => f.type === "pong")).toEqual({ type: "pong" });
  });
});
