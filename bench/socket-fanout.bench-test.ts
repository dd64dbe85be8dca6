/**
 * Socket fan-out inside workerd, without wrangler's dev proxy or a Node client
 * in between: one event to 1,000 dashboard sockets, and completion →
 * notify:task-assigned on an agent socket. Prints one `BENCH {...}` line.
 */
import { env, exports } from "cloudflare:workers";
import { SignJWT } from "jose";
import { expect, it } from "vitest";
import type { RoomActor, RoomResult } from "../src/room/commands";

const SOCKETS = 1000;
const ROUNDS = 10;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

it("fans events out to sockets", async () => {
  const now = new Date().toISOString();
  const projectId = crypto.randomUUID();
  const userId = crypto.randomUUID();
  await env.DB.batch([
    env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'sockets', ?1, ?2, ?2)").bind(projectId, now),
    env.DB.prepare("INSERT INTO users (id, email, role, created_at, updated_at) VALUES (?1, 'bench@example.com', 'admin', ?2, ?2)").bind(userId, now),
  ]);
  const token = await new SignJWT({ role: "admin" })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(userId)
    .setIssuer(env.JWT_ISSUER)
    .setAudience(env.JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(env.JWT_SECRET));

  const sent = new Map<string, number>();
  const latencies: number[] = [];
  for (let i = 0; i < SOCKETS; i++) {
    const res = await exports.default.fetch(`https://hub.test/api/v1/projects/${projectId}/ws`, { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${token}` } });
    const ws = res.webSocket!;
    ws.accept();
    ws.addEventListener("message", (e) => {
      const f = JSON.parse(e.data as string);
      if (f.event_type === "note_added") latencies.push(performance.now() - sent.get(f.data.content)!);
    });
  }
  const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
  const person: RoomActor = { kind: "person", userId, label: "bench" };
  const created = (await room.execute(projectId, person, {
    op: "create",
    task: { title: "t", spec: "", type: "feature", priority: "normal", targetRepo: null, targetBranch: null, acceptanceCriteria: [], structuredSpec: null, requirements: null, requirePlan: false, timeoutSeconds: null, sourceSessionId: null, warnings: [] },
    dependencies: [],
  })) as unknown as RoomResult;
  if (!created.ok) throw new Error("create failed");
  for (let i = 0; i < ROUNDS; i++) {
    const content = `n${i}`;
    sent.set(content, performance.now());
    await room.execute(projectId, person, { op: "note", taskId: created.taskId, content, urgent: false });
    for (let t = 0; latencies.length < (i + 1) * SOCKETS && t < 2000; t++) await new Promise((r) => setTimeout(r, 1));
  }
  expect(latencies).toHaveLength(SOCKETS * ROUNDS);
  console.log(`BENCH ${JSON.stringify({ scenario: "socket-fanout", sockets: SOCKETS, rounds: ROUNDS, p50: percentile(latencies, 50), p99: percentile(latencies, 99) })}`);
});
