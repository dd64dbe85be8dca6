/**
 * Agent-to-agent file transfer inside workerd: a file sent by one fake daemon
 * and received by another, through both servers' links (the sender's link
 * checks and hashes each chunk and hands it to the receiver's link over RPC),
 * every chunk checked in order and the sha256 verified at the receiver.
 * Three sizes, one after the other, so that the bench's driver can set the
 * workerd process's memory during the large ones beside the small one; each
 * link's own count of chunk bytes on their way to the other link is read from
 * it after each. Prints one `BENCH {...}` line.
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { CHUNK_SIZE, fakeDaemon, fileTransfers, patternFile, sha256Of } from "../test/fake-daemon";
import { bootstrapAdmin, call, createProject, hubAs, registerAgent } from "../test/helpers";
import { openSession } from "../test/task-world";

const SIZES_MIB = [32, 128, 512];
/** Chunks the sending daemon may be ahead of what the receiving one has read: what the sockets' buffers between them would hold. */
const LEAD_CHUNKS = 32;

it("relays files between two servers' links", async () => {
  const admin = await bootstrapAdmin();
  const project = await createProject(admin, "transfers");
  await call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: admin, body: { settings: { remote_exec: true } } });
  const [from, to] = await Promise.all([registerAgent(admin, "bench-sender"), registerAgent(admin, "bench-receiver")]);
  await openSession(from.apiKey, project.id, "sender");
  await openSession(to.apiKey, project.id, "receiver");
  const files = new Map(SIZES_MIB.map((mib) => [`/data/${mib}.bin`, patternFile(mib * 1024 * 1024)]));
  const receiver = fileTransfers(await fakeDaemon(to.apiKey), files);
  const received = () => [...receiver.received.values()].reduce((n, r) => n + r.indices.length, 0);
  const sender = fileTransfers(await fakeDaemon(from.apiKey), files, { ahead: () => sender.chunksSent() - received() >= LEAD_CHUNKS });
  const link = (serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));

  const runs = [];
  for (const mib of SIZES_MIB) {
    const path = `/data/${mib}.bin`;
    const file = files.get(path)!;
    const sha256 = sha256Of(file);
    const started = { epochMs: Date.now(), at: performance.now() };
    const { data, response } = await hubAs({ apiKey: from.apiKey }).POST("/api/v1/server/remote/file-transfer", {
      body: { target_session: "receiver", project_id: project.id, filename: `${mib}.bin`, file_path: path, file_size: file.size, sha256 },
    });
    expect(response.status).toBe(200);
    const id = data!.transfer_id;
    for (;;) {
      const status = (await hubAs({ apiKey: from.apiKey }).GET("/api/v1/server/remote/file-transfer/{id}", { params: { path: { id } } })).data!;
      if (status.status === "completed") break;
      expect(status.status, status.error ?? "").not.toMatch(/failed|rejected/);
      await new Promise((r) => setTimeout(r, 20));
    }
    const seconds = (performance.now() - started.at) / 1000;
    const got = receiver.received.get(id)!;
    expect(got.verified).toBe(true);
    expect(got.indices).toEqual(Array.from({ length: Math.ceil(file.size / CHUNK_SIZE) }, (_, i) => i));
    runs.push({
      mib,
      seconds,
      MiBps: mib / seconds,
      startEpochMs: started.epochMs,
      endEpochMs: Date.now(),
      senderLinkPeakInFlightBytes: (await link(from.id).transferMemory()).peakInFlightBytes,
      receiverLinkPeakInFlightBytes: (await link(to.id).transferMemory()).peakInFlightBytes,
    });
  }
  console.log(`BENCH ${JSON.stringify({ scenario: "transfer", leadChunks: LEAD_CHUNKS, runs })}`);
});
