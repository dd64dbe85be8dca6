/**
 * The hub's log lines, as the Worker and its Durable Objects write them: the
 * Worker, the rooms and these tests share one isolate, so the console they
 * write to is the one spied on here. The suite runs with LOG_LEVEL=warn
 * (vitest.config.ts); this file sets the production default, info, as an
 * operator would, and puts it back afterwards.
 */
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from "vitest";
import {
  ADMIN,
  BOOTSTRAP_TOKEN,
  bootstrapAdmin,
  call,
  createProject,
  createUser,
  daemonRegistration,
  login,
  fetchUrl,
  registrationToken,
  until as waitUntil,
} from "./helpers";

const receiver = inject("receiver");
const levelBefore = env.LOG_LEVEL;
const METHODS = ["log", "info", "warn", "error", "debug"] as const;

/** Everything written to the console since the last test began, one entry per call. */
let written: string[] = [];

beforeAll(() => {
  env.LOG_LEVEL = "info";
});
afterAll(() => {
  env.LOG_LEVEL = levelBefore;
});
beforeEach(() => {
  written = [];
  for (const m of METHODS) vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void written.push(args.map(String).join(" ")));
});
afterEach(() => {
  vi.restoreAllMocks();
});

interface Line {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** Every line parsed: each console call is one JSON object, or the test fails here. */
const lines = (): Line[] => written.map((text) => JSON.parse(text) as Line);
const requestLines = () => lines().filter((l) => l.msg === "request");
const lineOf = (reply: { headers: Headers }) => {
  const requestId = reply.headers.get("X-Request-Id");
  const found = requestLines().filter((l) => l.request_id === requestId);
  expect(found, `one request line for ${requestId}`).toHaveLength(1);
  return found[0]!;
};
const roomLinesOf = (reply: { headers: Headers }) => lines().filter((l) => l.msg === "room operation" && l.request_id === reply.headers.get("X-Request-Id"));

const until = async <T>(read: () => T | undefined, what: string) => (await waitUntil(read, (value) => value !== undefined, what)) as T;

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

describe("request lines", () => {
  it("names the route's pattern, the operation, the caller, the project and the task, with status and duration", async () => {
    const project = await createProject(admin, "Logged");
    const server = await call("/api/v1/servers/register", { body: daemonRegistration("logged-agent", await registrationToken(admin)) });
    const apiKey = server.json.api_key as string;
    written = [];

    const read = await call(`/api/v1/projects/${project.id}`, { token: admin });
    expect(read.status).toBe(200);
    expect(lineOf(read)).toMatchObject({
      level: "info",
      route: "/api/v1/projects/:id",
      method: "GET",
      operation: "getProject",
      status: 200,
      project_id: project.id,
      actor: { kind: "user", id: expect.any(String) },
      duration_ms: expect.any(Number),
    });

    const created = await call("/api/v1/server/tasks", { apiKey, body: { title: "logged task", project_id: project.id } });
    expect(created.status, created.text).toBe(201);
    const taskId = created.json.id as string;
    expect(lineOf(created)).toMatchObject({
      route: "/api/v1/server/tasks",
      status: 201,
      project_id: project.id,
      task_id: taskId,
      actor: { kind: "server", id: server.json.id },
    });
    // The room's line for the operation carries the request's id.
    expect(roomLinesOf(created)).toEqual([
      expect.objectContaining({
        level: "info",
        project_id: project.id,
        task_id: taskId,
        operation: "create",
        outcome: "committed",
        actor: { kind: "server", id: server.json.id },
        batch_size: 1,
        duration_ms: expect.any(Number),
        d1_queries: expect.any(Number),
      }),
    ]);

    const noted = await call(`/api/v1/server/tasks/${taskId}/notes`, { apiKey, body: { content: "a note" } });
    expect(noted.status, noted.text).toBe(201);
    expect(lineOf(noted)).toMatchObject({ route: "/api/v1/server/tasks/:id/notes", operation: "agentAddTaskNote", project_id: project.id, task_id: taskId });
    expect(roomLinesOf(noted)).toEqual([expect.objectContaining({ operation: "note", task_id: taskId, outcome: "committed" })]);

    // A refusal in the room is logged as one, with its code, under the request's id.
    const refused = await call(`/api/v1/server/tasks/${taskId}/complete`, { apiKey, body: { result: { summary: "done" } } });
    expect(refused.status).toBe(409);
    expect(lineOf(refused)).toMatchObject({ status: 409, level: "info", task_id: taskId });
    expect(roomLinesOf(refused)).toEqual([expect.objectContaining({ operation: "complete", outcome: "refused", code: refused.json.code, task_id: taskId })]);
  });

  it("logs a task that is not found by the id in its route, and never a concrete path or query string", async () => {
    const missing = crypto.randomUUID();
    const notFound = await call(`/api/v1/tasks/${missing}?ids=${"q".repeat(12)}`, { token: admin });
    expect(notFound.status).toBe(404);
    expect(lineOf(notFound)).toMatchObject({ level: "info", route: "/api/v1/tasks/:id", status: 404, task_id: missing });

    const nowhere = await call("/api/v1/no-such-thing/here?token=query-string-value", { token: admin });
    expect(nowhere.status).toBe(404);
    const line = lineOf(nowhere);
    expect(line.route).not.toContain("no-such-thing");
    expect(written.join("\n")).not.toContain("query-string-value");
    expect(written.join("\n")).not.toContain("q".repeat(12));
  });

  it("writes no secret: tokens, keys, passwords, signed URLs and webhook secrets stay out of every line", async () => {
    const secrets: string[] = [BOOTSTRAP_TOKEN, ADMIN.password, admin, env.JWT_SECRET, env.DATA_KEY!];

    const member = await createUser(admin, "member");
    secrets.push(member.password, member.token);
    const session = await login(member.email, member.password);
    expect(session.status).toBe(200);
    secrets.push(session.json.access_token, session.json.refresh_token);
    const refreshed = await call("/api/v1/auth/refresh", { body: { refresh_token: session.json.refresh_token } });
    expect(refreshed.status, refreshed.text).toBe(200);
    secrets.push(refreshed.json.access_token, refreshed.json.refresh_token);
    expect((await login(member.email, "a-wrong-password-guess")).status).toBe(401);
    secrets.push("a-wrong-password-guess");

    const registration = await registrationToken(admin);
    secrets.push(registration);
    const server = await call("/api/v1/servers/register", { body: daemonRegistration("secret-agent", registration) });
    expect(server.status, server.text).toBe(201);
    const apiKey = server.json.api_key as string;
    secrets.push(apiKey);
    expect((await call("/api/v1/servers/heartbeat", { apiKey, body: {} })).status).toBe(200);
    const wrongKey = `${apiKey.slice(0, -4)}zzzz`;
    expect((await call("/api/v1/servers/heartbeat", { apiKey: wrongKey, body: {} })).status).toBe(401);
    secrets.push(wrongKey);

    const project = await createProject(admin, "Secrets");
    const bytes = new TextEncoder().encode("some bytes");
    const dataref = await call("/api/v1/server/datarefs", { apiKey, body: { project_id: project.id, size: bytes.byteLength } });
    expect(dataref.status, dataref.text).toBe(201);
    const uploadToken = new URL(dataref.json.upload.url).searchParams.get("token")!;
    secrets.push(uploadToken);
    expect((await fetchUrl(dataref.json.upload.url, { method: "PUT", body: bytes })).status).toBe(200);
    const meta = await call(`/api/v1/server/datarefs/${dataref.json.dataref.id}`, { apiKey });
    secrets.push(new URL(meta.json.download.url).searchParams.get("token")!);
    expect((await fetchUrl(meta.json.download.url)).status).toBe(200);

    const hook = await call(`/api/v1/projects/${project.id}/webhooks`, {
      token: admin,
      body: { url: `${receiver}/hooks/logging-${crypto.randomUUID().slice(0, 8)}` },
    });
    expect(hook.status, hook.text).toBe(201);
    secrets.push(hook.json.secret, hook.json.secret.slice("whsec_".length));
    const rotated = await call(`/api/v1/projects/${project.id}/webhooks/${hook.json.id}/rotate-secret`, { method: "POST", token: admin });
    expect(rotated.status, rotated.text).toBe(200);
    secrets.push(rotated.json.secret, rotated.json.secret.slice("whsec_".length));
    // An event in the project is delivered to the webhook, signed with both secrets: the delivery's line names it.
    const task = await call("/api/v1/tasks", { token: admin, body: { title: "delivered", project_id: project.id } });
    expect(task.status, task.text).toBe(201);
    const delivery = await until(() => lines().find((l) => l.msg === "delivery" && l.task_id === task.json.id), "the delivery's line");
    expect(delivery).toMatchObject({
      level: "info",
      operation: "webhook_delivery",
      project_id: project.id,
      target_id: hook.json.id,
      event_type: "task_created",
      outcome: "delivered",
      status_code: 200,
    });

    // An SSH access grant's private key (handed to the source's daemon only) and a connect token.
    const other = await call("/api/v1/servers/register", { body: daemonRegistration("secret-target", await registrationToken(admin)) });
    expect(other.status, other.text).toBe(201);
    const granted = await call("/api/v1/access-grants", {
      token: admin,
      body: { source_server_id: server.json.id, target_server_id: other.json.id, privilege_level: "standard" },
    });
    expect(granted.status, granted.text).toBe(201);
    const held = await call("/api/v1/server/access-grants", { apiKey });
    const privateKey: string = held.json.find((g: any) => g.role === "source").ssh_private_key;
    secrets.push(...privateKey.split("\n").filter((line) => line.length >= 8 && !line.startsWith("-----")));
    const sessionId = (await call("/api/v1/server/sessions", { apiKey, body: { name: "secret-session", project_id: project.id } })).json.id;
    const connect = await call(`/api/v1/projects/${project.id}/sessions/${sessionId}/connect`, { token: admin, body: {} });
    expect(connect.status, connect.text).toBe(200);
    secrets.push(connect.json.token);

    // What was written is there to check: every request above has its line.
    expect(requestLines().length).toBeGreaterThanOrEqual(15);
    expect(requestLines().map((l) => l.route)).toEqual(
      expect.arrayContaining(["/api/v1/auth/login", "/api/v1/servers/register", "/api/v1/blobs/:id", "/api/v1/projects/:id/webhooks"]),
    );
    const output = written.join("\n");
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThanOrEqual(8);
      expect(output.includes(secret), `a secret (${secret.slice(0, 4)}…) in the log`).toBe(false);
    }
  });

  it("LOG_LEVEL drops the lines below it: at warn, a request writes none", async () => {
    env.LOG_LEVEL = "warn";
    try {
      const read = await call("/api/v1/projects", { token: admin });
      expect(read.status).toBe(200);
    } finally {
      env.LOG_LEVEL = "info";
    }
    expect(written).toEqual([]);
    const again = await call("/api/v1/projects", { token: admin });
    expect(lineOf(again)).toMatchObject({ route: "/api/v1/projects", status: 200 });
  });
});
