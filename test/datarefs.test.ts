/** DataRefs: bytes in R2 behind signed, short-lived URLs. */
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, createUser, expectProblem, fetchUrl } from "./helpers";
import { createWorld, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("DataRefs");
});

const sha256 = async (bytes: Uint8Array) =>
  [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
const bytesOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) % 251);
/** A body streamed in chunks of the given sizes, sent without a Content-Length. */
const streamed = (data: Uint8Array, chunkSizes: number[]) => {
  let at = 0;
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= data.byteLength) return controller.close();
      const n = chunkSizes[i++ % chunkSizes.length]!;
      controller.enqueue(data.slice(at, at + n));
      at += n;
    },
  });
};
/** Signed URLs are called as they are, and their answers held to the API's description like every other. */

async function create(body: Record<string, unknown>, apiKey = w.worker.apiKey) {
  const reply = await call("/api/v1/server/datarefs", { apiKey, body: { project_id: w.project.id, ...body } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { dataref: { id: string; uri: string; status: string }; upload: { method: string; url: string; expires_at: string } };
}

describe("round trip", () => {
  it("uploads 5 MiB with its sha256 and downloads it back, whole and by range", async () => {
    const data = bytesOf(5 * 1024 * 1024);
    const digest = await sha256(data);
    const { dataref, upload } = await create({ content_type: "application/octet-stream", size: data.byteLength, sha256: digest, filename: "blob.bin" });
    expect(dataref).toMatchObject({ uri: `dataref:${dataref.id}`, status: "pending" });
    expect(upload.method).toBe("PUT");
    expect(Date.parse(upload.expires_at) - Date.now()).toBeLessThanOrEqual(15 * 60_000);

    const put = await fetchUrl(upload.url, { method: "PUT", body: data, headers: { "Content-Length": String(data.byteLength) } });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await put.json()).toMatchObject({ status: "complete", sha256: digest, size: data.byteLength });

    const meta = await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.orchestrator.apiKey });
    expect(meta.json).toMatchObject({ status: "complete", sha256: digest, download: { url: expect.any(String), expires_at: expect.any(String) } });
    const whole = await fetchUrl(meta.json.download.url);
    expect(whole.status).toBe(200);
    expect(await sha256(new Uint8Array(await whole.arrayBuffer()))).toBe(digest);

    const part = await fetchUrl(meta.json.download.url, { headers: { Range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("Content-Range")).toBe(`bytes 100-199/${data.byteLength}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(100, 200));
    const tail = await fetchUrl(meta.json.download.url, { headers: { Range: "bytes=-10" } });
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(data.slice(-10));
    const bad = await fetchUrl(meta.json.download.url, { headers: { Range: `bytes=${data.byteLength}-` } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("Content-Range")).toBe(`bytes */${data.byteLength}`);
  });

  it("computes the sha256 when none was declared, and keeps a complete DataRef immutable", async () => {
    const data = bytesOf(1000);
    const { dataref, upload } = await create({ size: data.byteLength });
    expect((await fetchUrl(upload.url, { method: "PUT", body: data })).status).toBe(200);
    const meta = await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey });
    expect(meta.json.sha256).toBe(await sha256(data));
    const again = await fetchUrl(upload.url, { method: "PUT", body: data });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("DATAREF_IMMUTABLE");
  });

  it("computes the exact sha256 of a body streamed in uneven chunks over several reads, and stores those bytes", async () => {
    // Over 1 MiB, so the hub reads it more than once; chunks of odd sizes, so reads and chunks never line up.
    const data = bytesOf(3 * 1024 * 1024 + 123);
    const { dataref, upload } = await create({ size: data.byteLength });
    const put = await fetchUrl(upload.url, { method: "PUT", body: streamed(data, [65_537, 7, 300_001, 4096]) });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(((await put.json()) as { sha256: string }).sha256).toBe(await sha256(data));
    const download = (await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url;
    expect(await sha256(new Uint8Array(await (await fetchUrl(download)).arrayBuffer()))).toBe(await sha256(data));
  });

  it("serves JSON bytes exactly as uploaded, DataRef pointers in them and ranges of them included", async () => {
    const text = JSON.stringify({ kept: { $dataref: crypto.randomUUID(), size: 1, sha256: "0".repeat(64), content_type: "text/plain" } });
    const data = new TextEncoder().encode(text);
    const { dataref, upload } = await create({ size: data.byteLength, content_type: "application/json" });
    expect((await fetchUrl(upload.url, { method: "PUT", body: data })).status).toBe(200);
    const download = (await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url;
    const whole = await fetchUrl(download);
    expect(whole.headers.get("Content-Type")).toBe("application/json");
    expect(await whole.text()).toBe(text);
    const part = await fetchUrl(download, { headers: { Range: "bytes=0-19" } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe(text.slice(0, 20));
  });
});

/** Uploads these bytes as a complete DataRef and answers its download URL. */
async function uploaded(body: Record<string, unknown>, data: Uint8Array) {
  const { dataref, upload } = await create({ size: data.byteLength, ...body });
  expect((await fetchUrl(upload.url, { method: "PUT", body: data })).status).toBe(200);
  return (await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url as string;
}

describe("serving uploaded bytes safely", () => {
  const page = new TextEncoder().encode("<script>fetch('/api/v1/auth/refresh', {method: 'POST'})</script>");

  it("downloads anything a browser could run as an attachment, sandboxed and never sniffed", async () => {
    for (const content_type of ["text/html", "text/html; charset=utf-8", "image/svg+xml", "application/pdf", "application/octet-stream", "TEXT/HTML"]) {
      const res = await fetchUrl(await uploaded({ content_type }, page));
      expect(res.status, content_type).toBe(200);
      expect(res.headers.get("Content-Type")).toBe(content_type);
      expect(res.headers.get("Content-Disposition"), content_type).toBe("attachment");
      expect(res.headers.get("Content-Security-Policy")).toBe("default-src 'none'; sandbox");
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
      await res.body?.cancel();
    }
  });

  it("shows text, JSON and raster images inline, still sandboxed, and ranges of them too", async () => {
    for (const content_type of ["text/plain", "text/plain; charset=utf-8", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp"]) {
      const url = await uploaded({ content_type }, page);
      for (const headers of [{}, { Range: "bytes=0-9" }] as Record<string, string>[]) {
        const res = await fetchUrl(url, { headers });
        expect(res.headers.get("Content-Disposition"), content_type).toBe("inline");
        expect(res.headers.get("Content-Security-Policy")).toBe("default-src 'none'; sandbox");
        expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
        await res.body?.cancel();
      }
    }
  });

  it("sandboxes the refusals of a blob URL too", async () => {
    const { dataref, upload } = await create({ size: 4, content_type: "text/html" });
    const download = upload.url.replace(/token=.*/, "token=forged");
    for (const res of [await fetchUrl(download), await fetchUrl(`${upload.url.split("?")[0]}?token=${new URL(upload.url).searchParams.get("token")}`)]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("Content-Security-Policy")).toBe("default-src 'none'; sandbox");
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
      await res.body?.cancel();
    }
    expect(dataref.status).toBe("pending");
  });

  it("names the file in an ASCII fallback and, when that is not the name, exactly in filename* (RFC 6266)", async () => {
    const cases = [
      ["report.txt", 'inline; filename="report.txt"'],
      ['say "hi"\\.bin', `attachment; filename="say _hi__.bin"; filename*=UTF-8''say%20%22hi%22%5C.bin`],
      ["résumé (final)*.pdf", `attachment; filename="r_sum_ (final)*.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29%2A.pdf`],
      ["отчёт.txt", `inline; filename="_____.txt"; filename*=UTF-8''%D0%BE%D1%82%D1%87%D1%91%D1%82.txt`],
    ] as const;
    for (const [filename, disposition] of cases) {
      const content_type = filename.endsWith(".txt") ? "text/plain" : "application/octet-stream";
      const res = await fetchUrl(await uploaded({ filename, content_type }, page));
      expect(res.headers.get("Content-Disposition"), filename).toBe(disposition);
      await res.body?.cancel();
    }
  });

  it("refuses a filename with a control character and a content type that is no media type, naming the field", async () => {
    for (const filename of ["a\r\nSet-Cookie: x=1", "tab\there", "nul\u0000", "del\u007f", "c1\u0085", "half\ud800.txt"]) {
      const reply = await call("/api/v1/server/datarefs", { apiKey: w.worker.apiKey, body: { project_id: w.project.id, size: 1, filename } });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors).toEqual([{ path: "filename", message: expect.stringContaining("control characters") }]);
    }
    // A browser splits a Content-Type on commas and takes the last type: these would be served inline as HTML.
    for (const content_type of [
      "text/html\r\nX-Evil: 1",
      "html",
      "text/plain; charset=ü",
      "text/plain;,text/html",
      'image/png;x="",text/html',
      "text/plain;",
    ]) {
      const reply = await call("/api/v1/server/datarefs", { apiKey: w.worker.apiKey, body: { project_id: w.project.id, size: 1, content_type } });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toEqual(["content_type"]);
    }
  });

  it("still serves a DataRef stored with a CR/LF filename or a malformed type before the rule, as a safe attachment", async () => {
    const { dataref, upload } = await create({ size: page.byteLength, content_type: "text/plain", filename: "ok.txt" });
    expect((await fetchUrl(upload.url, { method: "PUT", body: page })).status).toBe(200);
    await env.DB.prepare("UPDATE datarefs SET filename = ?1, content_type = ?2 WHERE id = ?3").bind("a\r\nb.html", "text/html\r\nX: y", dataref.id).run();
    const url = (await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url;
    const res = await fetchUrl(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/octet-stream");
    expect(res.headers.get("Content-Disposition")).toBe(`attachment; filename="a__b.html"; filename*=UTF-8''a%0D%0Ab.html`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(page);
  });

  it("serves a DataRef stored with a lone surrogate in its filename before the rule (D1 gives back U+FFFD for its three bytes)", async () => {
    const { dataref, upload } = await create({ size: page.byteLength, content_type: "text/plain", filename: "ok.txt" });
    expect((await fetchUrl(upload.url, { method: "PUT", body: page })).status).toBe(200);
    await env.DB.prepare("UPDATE datarefs SET filename = ?1 WHERE id = ?2").bind("half\ud800.txt", dataref.id).run();
    const res = await fetchUrl((await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Disposition")).toBe(`inline; filename="half___.txt"; filename*=UTF-8''half${"%EF%BF%BD".repeat(3)}.txt`);
    await res.body?.cancel();
  });
});

describe("refusals", () => {
  it("refuses a wrong size and a wrong sha256, leaving the DataRef pending", async () => {
    const data = bytesOf(2048);
    const sized = await create({ size: 1000 });
    const tooBig = await fetchUrl(sized.upload.url, { method: "PUT", body: data });
    expect(tooBig.status).toBe(422);
    expect(((await tooBig.json()) as { code: string }).code).toBe("SIZE_MISMATCH");

    const wrongHash = await create({ size: data.byteLength, sha256: "0".repeat(64) });
    const put = await fetchUrl(wrongHash.upload.url, { method: "PUT", body: data });
    expect(put.status).toBe(422);
    expect(((await put.json()) as { code: string }).code).toBe("SHA256_MISMATCH");
    expect((await call(`/api/v1/server/datarefs/${wrongHash.dataref.id}`, { apiKey: w.worker.apiKey })).json.status).toBe("pending");
    // A correct upload afterwards still works.
    const right = await create({ size: data.byteLength, sha256: await sha256(data) });
    expect((await fetchUrl(right.upload.url, { method: "PUT", body: data })).status).toBe(200);
  });

  it("refuses a streamed body longer or shorter than declared when it computes the sha256, and takes the right one after", async () => {
    const data = bytesOf(2 * 1024 * 1024 + 5);
    const { dataref, upload } = await create({ size: data.byteLength });
    const status = async (res: Response) => [res.status, ((await res.json()) as { code?: string }).code];
    const longer = new Uint8Array(data.byteLength + 1);
    longer.set(data);
    expect(await status(await fetchUrl(upload.url, { method: "PUT", body: streamed(longer, [500_000]) }))).toEqual([422, "SIZE_MISMATCH"]);
    expect(await status(await fetchUrl(upload.url, { method: "PUT", body: streamed(data.slice(0, -1), [500_000]) }))).toEqual([422, "SIZE_MISMATCH"]);
    expect((await call(`/api/v1/server/datarefs/${dataref.id}`, { apiKey: w.worker.apiKey })).json.status).toBe("pending");
    expect(await env.BLOBS.head(`projects/${w.project.id}/datarefs/${dataref.id}`)).toBeNull();
    const right = await fetchUrl(upload.url, { method: "PUT", body: streamed(data, [500_000]) });
    expect(right.status).toBe(200);
    expect(((await right.json()) as { sha256: string }).sha256).toBe(await sha256(data));
  });

  it("refuses an expired URL, a tampered signature, another object's URL, and the wrong method", async () => {
    const data = bytesOf(64);
    const a = await create({ size: data.byteLength });
    const b = await create({ size: data.byteLength });
    const token = new URL(a.upload.url).searchParams.get("token")!;
    const base = a.upload.url.split("?")[0]!;
    const status = async (res: Response) => [res.status, ((await res.json()) as { code: string }).code];

    const expired = await new SignJWT({ m: "PUT", s: data.byteLength })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject(a.dataref.id)
      .setAudience("orchestratia-dataref")
      .setIssuer(env.JWT_ISSUER)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 5)
      .sign(new TextEncoder().encode(env.JWT_SECRET));
    expect(await status(await fetchUrl(`${base}?token=${expired}`, { method: "PUT", body: data }))).toEqual([401, "INVALID_URL"]);
    const tampered = token.slice(0, -3) + (token.endsWith("AAA") ? "BBB" : "AAA");
    expect(await status(await fetchUrl(`${base}?token=${tampered}`, { method: "PUT", body: data }))).toEqual([401, "INVALID_URL"]);
    expect(
      await status(
        await fetchUrl(b.upload.url.replace(b.dataref.id, a.dataref.id).replace(/token=.*/, `token=${new URL(b.upload.url).searchParams.get("token")}`), {
          method: "PUT",
          body: data,
        }),
      ),
    ).toEqual([403, "URL_NOT_FOR_THIS"]);
    expect(await status(await fetchUrl(a.upload.url))).toEqual([403, "URL_NOT_FOR_THIS"]);
    expect(await status(await fetchUrl(base, { method: "PUT", body: data }))).toEqual([401, "INVALID_URL"]);

    expect((await fetchUrl(a.upload.url, { method: "PUT", body: data })).status).toBe(200);
    const download = (await call(`/api/v1/server/datarefs/${a.dataref.id}`, { apiKey: w.worker.apiKey })).json.download.url;
    expect(await status(await fetchUrl(download, { method: "PUT", body: data }))).toEqual([403, "URL_NOT_FOR_THIS"]);
  });

  it("keeps DataRefs to those who can see their project", async () => {
    const other = await createProject(w.admin, "Private bytes");
    const outsider = await createUser(w.admin, "member");
    expectProblem(await call(`/api/v1/projects/${other.id}/datarefs`, { token: outsider.token, body: { size: 1 } }), 404, "NOT_FOUND");
    const mine = await call(`/api/v1/projects/${w.project.id}/datarefs`, { token: w.member.token, body: { size: 3 } });
    expect(mine.status).toBe(201);
    expect((await call(`/api/v1/projects/${w.project.id}/datarefs/${mine.json.dataref.id}`, { token: w.member.token })).status).toBe(200);
    expectProblem(await call(`/api/v1/projects/${w.project.id}/datarefs/${mine.json.dataref.id}`, { token: outsider.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${other.id}/datarefs/${mine.json.dataref.id}`, { token: w.admin }), 404, "NOT_FOUND");
    const viewer = await createUser(w.admin, "viewer");
    await call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } });
    expectProblem(await call(`/api/v1/projects/${w.project.id}/datarefs`, { token: viewer.token, body: { size: 1 } }), 403, "FORBIDDEN");
    const invalid = await call("/api/v1/server/datarefs", { apiKey: w.worker.apiKey, body: { project_id: w.project.id, size: -1, sha256: "xyz" } });
    expect(invalid.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["sha256", "size"]);
  });
});

describe("lifetime", () => {
  it("cleans up uploads that never complete, from the room's alarm", async () => {
    const { runDurableObjectAlarm } = await import("cloudflare:test");
    const stale = await create({ size: 10 });
    const fresh = await create({ size: 10 });
    await env.DB.prepare("UPDATE datarefs SET upload_expires_at = ?1 WHERE id = ?2")
      .bind(new Date(Date.now() - 1000).toISOString(), stale.dataref.id)
      .run();
    await runDurableObjectAlarm(env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id)));
    expectProblem(await call(`/api/v1/server/datarefs/${stale.dataref.id}`, { apiKey: w.worker.apiKey }), 404, "NOT_FOUND");
    expect((await call(`/api/v1/server/datarefs/${fresh.dataref.id}`, { apiKey: w.worker.apiKey })).json.status).toBe("pending");
    const late = await fetchUrl(stale.upload.url, { method: "PUT", body: bytesOf(10) });
    expect(late.status).toBe(404);
  });

  it("removes a project's objects with the project", async () => {
    const project = await createProject(w.admin, "Ephemeral bytes");
    const created = await call(`/api/v1/projects/${project.id}/datarefs`, { token: w.admin, body: { size: 4 } });
    expect((await fetchUrl(created.json.upload.url, { method: "PUT", body: bytesOf(4) })).status).toBe(200);
    expect((await env.BLOBS.list({ prefix: `projects/${project.id}/` })).objects).toHaveLength(1);
    expect((await call(`/api/v1/projects/${project.id}`, { method: "DELETE", token: w.admin })).status).toBe(200);
    await expect.poll(async () => (await env.BLOBS.list({ prefix: `projects/${project.id}/` })).objects.length).toBe(0);
  });
});

describe("automatic offload", () => {
  it("moves a 1 MiB contract to R2 and delivers it downstream as a DataRef whose URL returns the original data", async () => {
    const { cli, expectOk, newTask, T } = await import("./task-world");
    const big = { rows: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row-${i}`, payload: "x".repeat(30) })) };
    expect(new TextEncoder().encode(JSON.stringify(big)).byteLength).toBeGreaterThan(1024 * 1024);
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "dataset" }] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
    const result = { $schema: "orchestratia/task-result/v1", summary: "made the dataset", contracts: { dataset: { status: "fulfilled", data: big } } };
    const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result }));
    const pointer = done.json.result.contracts.dataset.data;
    expect(done.json.result.summary).toBe("made the dataset");
    expect(pointer).toMatchObject({
      $dataref: expect.any(String),
      size: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      content_type: "application/json",
      url: expect.any(String),
    });
    // D1 holds the pointer, not the data.
    const row = await env.DB.prepare("SELECT length(result) AS n FROM tasks WHERE id = ?1").bind(up).first<{ n: number }>();
    expect(row!.n).toBeLessThan(64 * 1024);

    for (const path of [`${T}/${down}`, `${T}/check?session_id=${w.workerSession}`]) {
      if (path.includes("check")) await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/assign`, { session_name: "worker" }));
      const reply = await expectOk(cli(w.worker.apiKey, "GET", path));
      const task = reply.json.tasks ? reply.json.tasks.find((t: { id: string }) => t.id === down) : reply.json;
      const delivered = task.resolved_inputs.dataset;
      expect(delivered).toMatchObject({ $dataref: pointer.$dataref, url: expect.stringContaining("/api/v1/blobs/") });
      const bytes = await fetchUrl(delivered.url);
      expect(bytes.status).toBe(200);
      expect(await bytes.json()).toEqual(big);
    }
    // Over the agent socket too.
    const { openSocket } = await import("./sockets");
    const socket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": w.worker.apiKey });
    socket.send({ type: "request:get-task", id: "get-down", payload: { taskId: down } });
    const viaSocket = await socket.next((f) => f.correlationId === "get-down");
    expect(viaSocket.payload.task.resolved_inputs.dataset).toMatchObject({ $dataref: pointer.$dataref, url: expect.stringContaining("/api/v1/blobs/") });
    // Completing again with the same large result is still a no-op, not a conflict.
    expect((await cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result })).status).toBe(200);
  });

  it("moves a large structured spec to R2 and keeps small ones inline", async () => {
    const { cli, expectOk, T } = await import("./task-world");
    const requirements = Array.from({ length: 400 }, (_, i) => ({ description: `requirement ${i} ${"y".repeat(200)}`, priority: "should" }));
    const spec = { $schema: "orchestratia/task-spec/v1", requirements };
    const created = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "big spec", project_id: w.project.id, structured_spec: spec }), 201);
    expect(created.json.structured_spec.$schema).toBe("orchestratia/task-spec/v1");
    const moved = created.json.structured_spec.requirements;
    expect(moved).toMatchObject({ $dataref: expect.any(String), url: expect.any(String) });
    expect(await (await fetchUrl(moved.url)).json()).toEqual(requirements);
    const small = await expectOk(
      cli(w.orchestrator.apiKey, "POST", T, {
        title: "small",
        project_id: w.project.id,
        structured_spec: { $schema: "orchestratia/task-spec/v1", requirements: [requirements[0]] },
      }),
      201,
    );
    expect(small.json.structured_spec.requirements).toEqual([requirements[0]]);
  });

  it("leaves nothing behind when the request that offloaded is refused or changes nothing", async () => {
    const { cli, expectOk, newTask, T } = await import("./task-world");
    const project = await createProject(w.admin, "Offload leftovers");
    const stored = async () => {
      const rows = await env.DB.prepare("SELECT count(*) AS n FROM datarefs WHERE project_id = ?1").bind(project.id).first<{ n: number }>();
      const objects = await env.BLOBS.list({ prefix: `projects/${project.id}/` });
      return { rows: rows!.n, objects: objects.objects.length };
    };
    const large = (tag: string) => ({
      $schema: "orchestratia/task-result/v1",
      summary: tag,
      contracts: { blob: { status: "fulfilled", data: "z".repeat(100_000) + tag } },
    });
    const id = await newTask({ ...w, project }, {});
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: w.worker.name }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: large("first") }));
    expect(await stored()).toEqual({ rows: 1, objects: 1 });

    // The same result again: a no-op, whose fresh copy is not kept.
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: large("first") }));
    // Another result: refused by the room after its large part was stored.
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: large("second") }), 409, "RESULT_CONFLICT");
    // A large spec on a task whose dependency does not exist: refused too.
    const spec = {
      $schema: "orchestratia/task-spec/v1",
      requirements: Array.from({ length: 400 }, (_, i) => ({ description: `r${i} ${"y".repeat(200)}`, priority: "should" })),
    };
    expectProblem(
      await cli(w.orchestrator.apiKey, "POST", T, { title: "t", project_id: project.id, structured_spec: spec, dependency_ids: [crypto.randomUUID()] }),
      422,
      "VALIDATION_FAILED",
    );
    expect(await stored()).toEqual({ rows: 1, objects: 1 });
  });
});
