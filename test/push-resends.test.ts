/**
 * Pushes to a daemon whose socket died without a close: the hub still sees it
 * open and what it sends there is lost. On the daemon's next socket the hub
 * sends again what its state shows was not acted on, and nothing that was.
 * An abrupt death is played by a socket whose frames from some point on
 * never reach the daemon (it reads none of them), as a dropped network does.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "./helpers";
import { connectDaemon, pythonJson } from "./fake-daemon";
import type { TestSocket } from "./sockets";
import { cli, createWorld, expectOk, taskIn, type World } from "./task-world";

let w: World;
const T = "/api/v1/server/tasks";

beforeAll(async () => {
  w = await createWorld("Push resends");
});

/** A daemon's socket: what it received before it died is what reached the daemon. */
interface Life {
  socket: TestSocket;
  diedAt: number | null;
}

/** hub.py on a new socket: auth, then report_alive_sessions. */
async function reconnect(apiKey = w.worker.apiKey, sessionId = w.workerSession): Promise<Life> {
  const socket = await connectDaemon(apiKey);
  await socket.next((f) => f.type === "auth_ok");
  socket.send(pythonJson({ type: "session_started", session_id: sessionId, pid: 77, recovered: true, tmux_name: "", working_dir: "/srv" }));
  return { socket, diedAt: null };
}

const assignToWorker = async (title: string) => {
  const created = await call(T, { apiKey: w.orchestrator.apiKey, body: { title, project_id: w.project.id, session_id: w.orchestratorSession } });
  expect(created.status, created.text).toBe(201);
  const assigned = await call(`${T}/${created.json.id}/assign`, { apiKey: w.orchestrator.apiKey, body: { session_name: "worker" } });
  expect(assigned.status, assigned.text).toBe(200);
  return created.json.id as string;
};

describe("pushes in flight when a daemon's socket dies abruptly", () => {
  it("30 abrupt reconnects: every assignment reaches a socket that stays, and none that was started reaches one twice", async () => {
    const lives: Life[] = [await reconnect()];
    const started = new Set<string>();
    const inFlight = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const life = lives.at(-1)!;
      if (i % 2 === 0) {
        // Delivered and acted on just before the network dropped: the agent started it.
        const id = await assignToWorker(`acted ${i}`);
        await life.socket.next((f) => f.type === "task_assigned" && f.task_id === id);
        expect((await call(`${T}/${id}/start`, { method: "POST", apiKey: w.worker.apiKey })).status).toBe(200);
        started.add(id);
      }
      life.diedAt = life.socket.frames.length;
      // Sent on a socket the hub still sees open, after the daemon stopped hearing it.
      inFlight.add(await assignToWorker(`in flight ${i}`));
      lives.push(await reconnect());
    }
    const last = lives.at(-1)!;
    const reached = (id: string) =>
      lives
        .flatMap((l) => (l.diedAt === null ? l.socket.frames : l.socket.frames.slice(0, l.diedAt)))
        .filter((f) => f.type === "task_assigned" && f.task_id === id).length;
    // Not started, each is sent again on every new socket while the last time it went out is recent: the socket that stays has them all.
    await last.socket.collect(inFlight.size, (f) => f.type === "task_assigned" && inFlight.has(f.task_id), 10_000);
    for (const id of inFlight) expect(reached(id), id).toBeGreaterThanOrEqual(1);
    expect(new Set(last.socket.frames.filter((f) => f.type === "task_assigned").map((f) => f.task_id))).toEqual(inFlight);
    // One the agent started is never sent again, on any socket, dead or alive.
    const sentInAll = (id: string) => lives.flatMap((l) => l.socket.frames).filter((f) => f.type === "task_assigned" && f.task_id === id).length;
    for (const id of started) expect(sentInAll(id), id).toBe(1);
  });

  it("sends a question to an agent again while it waits for its answer, and not one answered before the socket died", async () => {
    const { id } = await taskIn(w, "running");
    let asked = await reconnect(w.orchestrator.apiKey, w.orchestratorSession);
    const ask = async (question: string) =>
      (
        await expectOk(
          cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question, context: "", intervention_type: "question", target_session_id: w.orchestratorSession }),
        )
      ).json.intervention_id as string;
    const answered = await ask("Which port?");
    await asked.socket.next((f) => f.type === "intervention_for_session" && f.intervention_id === answered);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `/api/v1/server/interventions/${answered}/respond`, { response: "8080" }));
    asked.diedAt = asked.socket.frames.length;
    const lost = await ask("Which host?");
    const before = asked;
    asked = await reconnect(w.orchestrator.apiKey, w.orchestratorSession);
    expect(await asked.socket.next((f) => f.type === "intervention_for_session")).toMatchObject({
      intervention_id: lost,
      target_session_id: w.orchestratorSession,
    });
    asked.socket.send(pythonJson({ type: "ping" }));
    await asked.socket.next((f) => f.type === "pong");
    expect(asked.socket.frames.filter((f) => f.type === "intervention_for_session").map((f) => f.intervention_id)).toEqual([lost]);
    expect(before.socket.frames.filter((f) => f.intervention_id === lost)).toHaveLength(1);
  });
});
