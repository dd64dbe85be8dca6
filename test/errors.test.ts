import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAdmin, call, expectProblem, registerAgent } from "./helpers";

let admin: string;
let apiKey: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  apiKey = (await registerAgent(admin, "errors-agent")).apiKey;
});

describe("problem+json errors", () => {
  it("answers malformed JSON with 400", async () => {
    const reply = await call("/api/v1/projects", { token: admin, raw: '{"name": "x",', headers: { "Content-Type": "application/json" } });
    expectProblem(reply, 400, "MALFORMED_JSON");
    expect(reply.json).toMatchObject({ type: "/docs/problems#malformed-json", title: "Bad Request", status: 400 });
  });

  it("answers wrong types with 422 naming each field and the rule", async () => {
    const reply = await call("/api/v1/servers/tokens", { token: admin, body: { max_uses: "many", expires_in_seconds: 1.5, project_ids: ["nope"] } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual(
      expect.arrayContaining([
        { path: "max_uses", message: expect.stringMatching(/integer|number/) },
        { path: "expires_in_seconds", message: "must be an integer" },
        { path: "project_ids.0", message: "must be a UUID" },
      ]),
    );
    expect(reply.json.detail).toMatch(/max_uses/);
  });

  it("names the bound a number breaks, not only its type", async () => {
    const reply = await call("/api/v1/servers/heartbeat", { apiKey, body: { capabilities: { max_concurrent_tasks: 1001 } } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual([{ path: "capabilities.max_concurrent_tasks", message: "must be at most 1000" }]);
  });

  it("answers a JSON body of the wrong shape with 422", async () => {
    for (const raw of ["[1,2]", '"text"', "null", "42"]) {
      expectProblem(await call("/api/v1/projects", { token: admin, raw }), 422, "VALIDATION_FAILED");
    }
  });

  it("treats an empty body with a JSON content type as {} (the official CLI sends bodiless POSTs)", async () => {
    const reply = await call("/api/v1/servers/heartbeat", { apiKey, method: "POST", headers: { "Content-Type": "application/json", "Content-Length": "0" } });
    expect(reply.status).toBe(200);
  });

  it("answers an oversized body with 413", async () => {
    const reply = await call("/api/v1/projects", { token: admin, raw: JSON.stringify({ name: "x", description: "y".repeat(9 * 1024 * 1024) }) });
    expectProblem(reply, 413, "PAYLOAD_TOO_LARGE");
  });

  it("answers an unknown route with 404 and a wrong method with 405 and Allow", async () => {
    expectProblem(await call("/api/v1/nowhere", { token: admin }), 404, "NOT_FOUND");
    const wrongMethod = await call("/api/v1/auth/login", { method: "GET" });
    expectProblem(wrongMethod, 405, "METHOD_NOT_ALLOWED");
    expect(wrongMethod.headers.get("Allow")).toBe("POST");
    const projectPath = await call(`/api/v1/projects/${crypto.randomUUID()}`, { method: "POST", token: admin, body: {} });
    expectProblem(projectPath, 405, "METHOD_NOT_ALLOWED");
    expect(projectPath.headers.get("Allow")!.split(", ").sort()).toEqual(["DELETE", "GET", "PATCH", "PUT"]);
  });

  it("answers 401 without credentials and 403 for the wrong role, before reading the body", async () => {
    expectProblem(await call("/api/v1/users", { raw: "{not json" }), 401, "UNAUTHORIZED");
  });
});
