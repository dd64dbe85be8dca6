/**
 * A 50 MiB DataRef upload inside workerd: the hub's whole PUT (signed URL,
 * D1 bookkeeping, streaming into R2 with R2's sha256 check, or computing the
 * sha256 on the way when none was declared) beside a plain R2 put of the same
 * request body. Prints one `BENCH {...}` line.
 */
import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { signBlobUrl } from "../src/auth/signed-url";

const SIZE = 50 * 1024 * 1024;
const ROUNDS = 3;

it("uploads through the hub and straight to R2", async () => {
  const data = new Uint8Array(SIZE);
  for (let i = 0; i < SIZE; i += 4096) data[i] = i % 251;
  const sha256 = [...new Uint8Array(await crypto.subtle.digest("SHA-256", data))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const now = new Date().toISOString();
  const projectId = crypto.randomUUID();
  await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'bytes', ?1, ?2, ?2)").bind(projectId, now).run();
  const timed = async (fn: () => Promise<void>) => {
    const started = performance.now();
    await fn();
    return performance.now() - started;
  };
  /** Uploads through the hub to a new DataRef declared with (or without) its sha256. */
  const throughHub = async (declared: string | null) => {
    const id = crypto.randomUUID();
    await env.DB.prepare(
      "INSERT INTO datarefs (id, project_id, status, content_type, size, sha256, created_by, created_at, upload_expires_at) VALUES (?1, ?2, 'pending', 'application/octet-stream', ?3, ?4, 'bench', ?5, ?5)",
    )
      .bind(id, projectId, SIZE, declared, now)
      .run();
    const { url } = await signBlobUrl(env, "https://hub.test", { datarefId: id, method: "PUT", size: SIZE });
    return timed(async () => {
      const res = await exports.default.fetch(url, { method: "PUT", body: data, headers: { "Content-Length": String(SIZE) } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { sha256: string }).sha256).toBe(sha256);
    });
  };
  const hub: number[] = [];
  const computed: number[] = [];
  const plain: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    hub.push(await throughHub(sha256));
    computed.push(await throughHub(null));
    plain.push(await timed(async () => void (await env.BLOBS.put(`plain-${round}`, new Request("https://x", { method: "PUT", body: data }).body))));
  }
  const mibPerSecond = (ms: number) => SIZE / 1024 / 1024 / (ms / 1000);
  console.log(
    `BENCH ${JSON.stringify({ scenario: "dataref-upload", hubMiBps: mibPerSecond(Math.min(...hub)), computedMiBps: mibPerSecond(Math.min(...computed)), plainMiBps: mibPerSecond(Math.min(...plain)) })}`,
  );
});
