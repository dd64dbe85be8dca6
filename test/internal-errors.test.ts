/** Failures the client did not cause: a 500 that names nothing internal. This file breaks its own database. */
import { env } from "cloudflare:workers";
import { beforeAll, expect, it, vi } from "vitest";
import { bootstrapAdmin, call, expectProblem } from "./helpers";

let admin: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  await env.DB.prepare("DROP TABLE project_members").run();
});

it("answers an unexpected failure with a 500 problem that leaks nothing", async () => {
  const reply = await call("/api/v1/projects", { token: admin, body: { name: "doomed" } });
  expectProblem(reply, 500, "INTERNAL_ERROR");
  // The request id is random hex, which may spell "d1" by chance.
  expect(reply.text.replaceAll(reply.json.request_id, "")).not.toMatch(/project_members|SQL|D1|stack|at /i);
});

it("names the failed request by the id its response carries, and asks for it to be quoted", async () => {
  const reply = await call("/api/v1/projects", { token: admin, body: { name: "doomed" } });
  expectProblem(reply, 500, "INTERNAL_ERROR");
  const id = reply.headers.get("X-Request-Id");
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(reply.json.request_id).toBe(id);
  expect(reply.json.detail).toContain(`quote request id ${id}`);
});

it("takes Cloudflare's ray id as the request id when there is one", async () => {
  const reply = await call("/api/v1/projects", { token: admin, body: { name: "doomed" }, headers: { "cf-ray": "abc123-LHR" } });
  expectProblem(reply, 500, "INTERNAL_ERROR");
  expect(reply.headers.get("X-Request-Id")).toBe("abc123-LHR");
  expect(reply.json.request_id).toBe("abc123-LHR");
});

it("gives every answer a request id, not only failures", async () => {
  const reply = await call("/api/v1/health", { headers: { "cf-ray": "def456-AMS" } });
  expect(reply.headers.get("X-Request-Id")).toBe("def456-AMS");
  const fresh = await call("/api/v1/nowhere");
  expect(fresh.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
});

it("logs the failure as one JSON line with the request id, and nothing the client sent", async () => {
  const logged = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    const reply = await call("/api/v1/projects", { token: admin, body: { name: "secret-body" }, headers: { "cf-ray": "log123-LHR" } });
    expect(reply.status).toBe(500);
    const lines = logged.mock.calls.map((args) => args.join(" ")).filter((line) => line.includes("log123-LHR"));
    // The failure, with its error, and the request's own line (an error too: the hub failed it).
    expect(lines).toHaveLength(2);
    const [failure, request] = lines.map((line) => JSON.parse(line));
    expect(failure).toMatchObject({ level: "error", msg: "request failed", request_id: "log123-LHR", method: "POST", route: "/api/v1/projects", path: "/api/v1/projects" });
    expect(typeof failure.error.message).toBe("string");
    expect(request).toMatchObject({ level: "error", msg: "request", request_id: "log123-LHR", route: "/api/v1/projects", status: 500 });
    for (const line of lines) {
      expect(line).not.toContain("secret-body");
      expect(line).not.toContain(admin);
    }
  } finally {
    logged.mockRestore();
  }
});

it("leaves no half-written data behind: the failed batch created no project", async () => {
  const { count } = (await env.DB.prepare("SELECT count(*) AS count FROM projects").first<{ count: number }>())!;
  expect(count).toBe(0);
});

it("frees the Idempotency-Key of a request that failed on the hub's side, so a retry runs again", async () => {
  const headers = { "Idempotency-Key": "retry-me" };
  const first = await call("/api/v1/projects", { token: admin, body: { name: "again" }, headers });
  expect(first.status).toBe(500);
  const second = await call("/api/v1/projects", { token: admin, body: { name: "again" }, headers });
  expect(second.status).toBe(500);
  expect(second.headers.get("Idempotent-Replayed")).toBeNull();
});
