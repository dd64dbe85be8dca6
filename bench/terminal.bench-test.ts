/**
 * Live terminals inside workerd: a keystroke's round trip (a viewer's input →
 * the server's link → the daemon's socket → the daemon echoes it → the link →
 * the viewer), beside a ping's round trip on the daemon's own socket; and
 * output throughput to 20 viewers, every byte checked in order, beside the
 * same output to one viewer. Prints one `BENCH {...}` line.
 */
import { expect, it } from "vitest";
import { TERMINAL_INPUTS_PER_SECOND } from "../src/server-link/terminals";
import { b64, fakeDaemon, pythonJson } from "../test/fake-daemon";
import { bootstrapAdmin, createProject, hubAs, registerAgent } from "../test/helpers";
import { openSocket, type TestSocket } from "../test/sockets";
import { percentile } from "./percentile";

const KEYSTROKES = 500;
const VIEWERS = 20;
const OUTPUT_BYTES = 8 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;
/** The fake daemon stays at most this far ahead of the slowest viewer, as a terminal's reader does when its writer outpaces it. */
const LEAD_BYTES = 512 * 1024;
const MARKER = "AQ==";

it("relays keystrokes and output", async () => {
  const admin = await bootstrapAdmin();
  const project = await createProject(admin, "terminals");
  const box = await registerAgent(admin, "bench-box");
  const daemon = await fakeDaemon(box.apiKey, { echo: false });
  const started = await hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", { params: { path: { id: project.id } }, body: { server_id: box.id } });
  expect(started.response.status, JSON.stringify(started.error)).toBe(201);
  const sessionId = started.data!.id;
  const viewer = () => openSocket(`/api/v1/projects/${project.id}/sessions/${sessionId}/terminal`, { "Sec-WebSocket-Protocol": `bearer, ${admin}` });
  const ready = async (t: TestSocket) => expect(await t.next((f) => f.type === "ready", 10_000)).toMatchObject({ writer: true });

  // Keystrokes: the daemon echoes each one as it arrives, as a shell does.
  const typist = await viewer();
  await ready(typist);
  daemon.socket.ws.addEventListener("message", (e) => {
    const f = JSON.parse(e.data as string);
    if (f.type === "session_input") daemon.socket.send(pythonJson({ type: "session_output", session_id: sessionId, data: f.data }));
  });
  const roundTrips: number[] = [];
  // No faster than the link takes a writer's input (a person types slower still); each round trip is timed on its own.
  const gapMs = 1000 / TERMINAL_INPUTS_PER_SECOND + 1;
  for (let i = 0; i < KEYSTROKES; i++) {
    const key = String.fromCharCode(97 + (i % 26));
    const sent = performance.now();
    typist.send({ type: "input", data: b64(key) });
    const echo = await typist.next((f) => f.type === "output");
    roundTrips.push(performance.now() - sent);
    expect(atob(echo.data)).toBe(key);
    typist.send({ type: "ack", bytes: 1 });
    await new Promise((r) => setTimeout(r, Math.max(0, sent + gapMs - performance.now())));
  }
  const pings: number[] = [];
  for (let i = 0; i < KEYSTROKES; i++) {
    const sent = performance.now();
    daemon.send({ type: "ping" });
    await daemon.socket.next((f) => f.type === "pong");
    pings.push(performance.now() - sent);
  }
  typist.ws.close(1000, "done");

  /** Streams OUTPUT_BYTES to `count` viewers that acknowledge what they read; checks every byte, in order, at each. */
  const stream = async (count: number) => {
    const viewers = await Promise.all(Array.from({ length: count }, viewer));
    await Promise.all(viewers.map(ready));
    // Each viewer checks what it receives against what was sent, from where its replay of earlier output ended.
    const pattern = (offset: number) => (offset * 31 + 7) & 255;
    const received = viewers.map(() => 0);
    let mismatches = 0;
    // Live output starts after a one-byte marker: what comes before it is the replayed scrollback.
    const live = viewers.map(() => false);
    viewers.forEach((t, v) => {
      t.ws.addEventListener("message", (e) => {
        const f = JSON.parse(e.data as string);
        if (f.type !== "output") return;
        const bytes = Uint8Array.fromBase64(f.data);
        t.send({ type: "ack", bytes: bytes.byteLength });
        if (!live[v]) {
          live[v] = f.data === MARKER;
          return;
        }
        for (let i = 0; i < bytes.byteLength; i++) if (bytes[i] !== pattern(received[v]! + i)) mismatches++;
        received[v]! += bytes.byteLength;
      });
    });
    daemon.output(sessionId, Uint8Array.fromBase64(MARKER));
    const begun = performance.now();
    for (let offset = 0; offset < OUTPUT_BYTES; offset += CHUNK_BYTES) {
      const chunk = new Uint8Array(CHUNK_BYTES);
      for (let i = 0; i < CHUNK_BYTES; i++) chunk[i] = pattern(offset + i);
      daemon.output(sessionId, chunk);
      while (offset + CHUNK_BYTES - Math.min(...received) > LEAD_BYTES) await new Promise((r) => setTimeout(r, 0));
    }
    while (Math.min(...received) < OUTPUT_BYTES) await new Promise((r) => setTimeout(r, 0));
    const seconds = (performance.now() - begun) / 1000;
    expect(mismatches).toBe(0);
    expect(viewers.some((t) => t.frames.some((f) => f.type === "lagging"))).toBe(false);
    viewers.forEach((t) => t.ws.close(1000, "done"));
    return { viewers: count, seconds, totalMiBps: (count * OUTPUT_BYTES) / (1024 * 1024) / seconds };
  };
  const one = await stream(1);
  const many = await stream(VIEWERS);

  console.log(
    `BENCH ${JSON.stringify({
      scenario: "terminal",
      keystrokes: KEYSTROKES,
      keyP50: percentile(roundTrips, 50),
      keyP99: percentile(roundTrips, 99),
      pingP50: percentile(pings, 50),
      pingP99: percentile(pings, 99),
      outputMiB: OUTPUT_BYTES / (1024 * 1024),
      one,
      many,
    })}`,
  );
});
