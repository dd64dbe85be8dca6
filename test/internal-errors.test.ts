/** Failures the client did not cause: a 500 that names nothing internal. This file breaks its own database. */
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { bootstrapAdmin, call, expectProblem } from "./helpers";

let admin: string;

beforeAll(async () => {
  admin = await bootstrapAdmin();
  await env.DB.prepare("DROP TABLE project_members").run();
});

it("answers an unexpected failure with a 500 problem that leaks nothing", async () => {
  const reply = await call("/api/v1/projects", { token: admin, body: { name: "doomed" } });
  expectProblem(reply, 500, "INTERNAL_ERROR");
  expect(reply.text).not.toMatch(/project_members|SQL|D1|stack|at /i);
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
