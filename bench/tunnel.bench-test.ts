/**
 * SSH tunnels inside workerd, between two fake daemons speaking s2s_tunnel.py
 * (source) and tunnel.py (target), through both servers' links: a round trip
 * (source → its link → the target's link → target, which echoes at once, and
 * back) beside a ping on the source's own socket, and the throughput of 64 MiB
 * each way, every byte checked in order at the far end. Prints one `BENCH {...}` line.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { fakeDaemon } from "../test/fake-daemon";
import { randomBytes, receivedBytes, sshSide, type TunnelEnd } from "../test/fake-tunnels";
import { bootstrapAdmin, call, createProject, registerAgent } from "../test/helpers";
import { openSession } from "../test/task-world";
import { percentile } from "./percentile";

const ROUND_TRIPS = 500;
const THROUGHPUT_MIB = 64;
/** How far a sending daemon runs ahead of what the far end has: what the sockets' buffers between them would hold. */
const LEAD_BYTES = 1024 * 1024;

const tick = () => new Promise((r) => setTimeout(r, 0));
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);

it("relays tunnels between two servers' links", async () => {
  const admin = await bootstrapAdmin();
  const project = await createProject(admin, "tunnels");
  const [from, to] = await Promise.all([registerAgent(admin, "bench-source"), registerAgent(admin, "bench-target")]);
  await openSession(from.apiKey, project.id, "source");
  await openSession(to.apiKey, project.id, "target");
  const sourceDaemon = await fakeDaemon(from.apiKey);
  const targetDaemon = await fakeDaemon(to.apiKey);
  const src = sshSide(sourceDaemon, from.apiKey);
  const tgt = sshSide(targetDaemon, to.apiKey);
  const made = await call("/api/v1/access-grants", {
    method: "POST",
    token: admin,
    body: { source_server_id: from.id, target_server_id: to.id, privilege_level: "standard" },
  });
  expect(made.status).toBe(201);

  // Round trips: the target's service echoes each read at once.
  const echo = await src.connect(made.json.id);
  expect(echo.ready).toBe(true);
  targetDaemon.socket.ws.addEventListener("message", (e) => {
    const f = JSON.parse(e.data as string);
    if (f.type === "tunnel_data" && f.tunnel_id === echo.id) targetDaemon.send({ type: "tunnel_data", tunnel_id: echo.id, data: f.data });
  });
  const rtt: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const want = echo.bytes + 64;
    const sent = performance.now();
    await src.write(echo.id, randomBytes(64));
    while (echo.bytes < want) await tick();
    rtt.push(performance.now() - sent);
  }
  const ping: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const sent = performance.now();
    sourceDaemon.send({ type: "ping" });
    await sourceDaemon.socket.next((f) => f.type === "pong");
    ping.push(performance.now() - sent);
  }

  // Throughput each way, on a fresh tunnel.
  const t = await src.connect(made.json.id);
  const far = tgt.tunnels.get(t.id)!;
  const measure = async (sender: typeof src, from: TunnelEnd, to: TunnelEnd) => {
    const bytes = randomBytes(THROUGHPUT_MIB * 1024 * 1024);
    const started = performance.now();
    const base = to.bytes;
    await sender.write(from.id, bytes, () => from.sent - (to.bytes - base) > LEAD_BYTES);
    while (to.bytes - base < bytes.byteLength) await tick();
    const seconds = (performance.now() - started) / 1000;
    expect(sameBytes(receivedBytes(to).subarray(base), bytes)).toBe(true);
    return THROUGHPUT_MIB / seconds;
  };
  const upMiBps = await measure(src, t, far);
  far.sent = 0;
  const downMiBps = await measure(tgt, far, t);
  const link = (serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));
  console.log(
    `BENCH ${JSON.stringify({
      scenario: "tunnel",
      roundTrips: ROUND_TRIPS,
      rttP50: percentile(rtt, 50),
      rttP99: percentile(rtt, 99),
      pingP50: percentile(ping, 50),
      pingP99: percentile(ping, 99),
      mib: THROUGHPUT_MIB,
      upMiBps,
      downMiBps,
      leadBytes: LEAD_BYTES,
      sourcePeakQueuedBytes: (await link(from.id).tunnelMemory()).peakQueuedBytes,
      targetPeakQueuedBytes: (await link(to.id).tunnelMemory()).peakQueuedBytes,
    })}`,
  );
});
