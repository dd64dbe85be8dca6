/**
 * SSH access grants and tunnels through the hub, against two fake daemons
 * speaking what hub.py, ssh_setup.py, s2s_tunnel.py and tunnel.py send and
 * read (test/fake-tunnels.ts), and people's `orchestratia-connect` tunnels.
 * Every refusal is checked to reach no daemon.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, until } from "./helpers";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";
import { randomBytes, receivedBytes, sshSide, type SshSide } from "./fake-tunnels";
import { TUNNEL_WINDOW_BYTES } from "../src/server-link/tunnels";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, type World } from "./task-world";

let w: World;
/** The orchestrator's machine reaches the worker's. */
let source: FakeDaemon;
let target: FakeDaemon;
let src: SshSide;
let tgt: SshSide;

const G = "/api/v1/access-grants";
const link = (serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));
const grant = (body: Record<string, unknown>, token = w.admin) => call(G, { method: "POST", token, body });
const grantOf = (fields: Record<string, unknown> = {}) =>
  grant({ source_server_id: w.orchestrator.id, target_server_id: w.worker.id, privilege_level: "standard", ...fields });
const revoke = (id: string) => call(`${G}/${id}`, { method: "DELETE", token: w.admin });
const events = async (type: string, projectId = w.project.id) =>
  (await call(`/api/v1/projects/${projectId}/events?limit=500`, { token: w.admin })).json.events.filter((e: any) => e.type === type);
const bytesEqual = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);

/** Decodes an OpenSSH private key file into its public key blob and its 64-byte Ed25519 private part (seed + public key). */
function readOpenSshPrivateKey(pem: string) {
  const body = pem.replace(/-----(BEGIN|END) OPENSSH PRIVATE KEY-----/g, "").replace(/\s/g, "");
  const bytes = Uint8Array.fromBase64(body);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const magic = new TextDecoder().decode(bytes.subarray(0, 15));
  at = 15;
  const str = () => {
    const n = view.getUint32(at);
    const out = bytes.subarray(at + 4, at + 4 + n);
    at += 4 + n;
    return out;
  };
  const text = () => new TextDecoder().decode(str());
  const cipher = text();
  const kdf = text();
  str();
  const count = view.getUint32(at);
  at += 4;
  const publicBlob = str();
  const priv = str();
  const p = new DataView(priv.buffer, priv.byteOffset, priv.byteLength);
  let q = 0;
  const pstr = () => {
    const n = p.getUint32(q);
    const out = priv.subarray(q + 4, q + 4 + n);
    q += 4 + n;
    return out;
  };
  const check1 = p.getUint32(0);
  const check2 = p.getUint32(4);
  q = 8;
  const keyType = new TextDecoder().decode(pstr());
  const pub = pstr();
  const secret = pstr();
  const comment = new TextDecoder().decode(pstr());
  const padding = priv.subarray(q);
  return { magic, cipher, kdf, count, publicBlob, checksMatch: check1 === check2, keyType, pub, secret, comment, padding, privateLength: priv.byteLength };
}

/** The public key's 32 bytes from an `ssh-ed25519 AAAA… comment` line. */
function readOpenSshPublicKey(line: string) {
  const [type, b64] = line.split(" ");
  const blob = Uint8Array.fromBase64(b64!);
  const view = new DataView(blob.buffer);
  const n = view.getUint32(0);
  const inner = new TextDecoder().decode(blob.subarray(4, 4 + n));
  const keyLength = view.getUint32(4 + n);
  return { type, inner, blob, key: blob.subarray(8 + n, 8 + n + keyLength) };
}

beforeAll(async () => {
  w = await createWorld("Access grants");
  source = await fakeDaemon(w.orchestrator.apiKey);
  target = await fakeDaemon(w.worker.apiKey);
  src = sshSide(source, w.orchestrator.apiKey);
  tgt = sshSide(target, w.worker.apiKey, [22, 5432]);
});

describe("granting access", () => {
  it("makes an Ed25519 key pair OpenSSH reads, pushes the public key to the target and the private key to the source, and shows people neither secret", async () => {
    const made = await expectOk(grantOf({ privilege_level: "elevated" }), 201);
    const g = made.json;
    expect(g).toMatchObject({
      source_server_id: w.orchestrator.id,
      target_server_id: w.worker.id,
      privilege_level: "elevated",
      local_bind_port: 30001,
      target_port: 22,
      ssh_username: "orchestratia",
      status: "active",
      project_id: w.project.id,
    });
    const lifetime = Date.parse(g.expires_at) - Date.parse(g.created_at);
    expect(lifetime).toBe(24 * 3600 * 1000);

    const setup = await target.socket.next((f) => f.type === "setup_ssh_access" && f.grant_id === g.id);
    expect(setup).toEqual({ type: "setup_ssh_access", grant_id: g.id, ssh_public_key: g.ssh_public_key, privilege_level: "elevated", target_port: 22 });
    const pushed = await source.socket.next((f) => f.type === "grant_ssh_access" && f.grant_id === g.id);
    expect(pushed).toEqual({
      type: "grant_ssh_access",
      grant_id: g.id,
      ssh_private_key: expect.stringMatching(/^-----BEGIN OPENSSH PRIVATE KEY-----\n/),
      local_bind_port: 30001,
      target_port: 22,
      privilege_level: "elevated",
      ssh_username: "orchestratia",
    });
    expect(tgt.authorizedKeys.get(g.id)).toEqual({ key: g.ssh_public_key, privilegeLevel: "elevated" });
    expect(src.listeners.get(g.id)).toEqual({ bindPort: 30001, targetPort: 22 });

    // The public line is an OpenSSH ed25519 key; the private file is openssh-key-v1, unencrypted, holding that same key.
    const pub = readOpenSshPublicKey(g.ssh_public_key);
    expect(pub).toMatchObject({ type: "ssh-ed25519", inner: "ssh-ed25519" });
    expect(pub.key.byteLength).toBe(32);
    const priv = readOpenSshPrivateKey(pushed.ssh_private_key);
    expect(priv).toMatchObject({ magic: "openssh-key-v1\0", cipher: "none", kdf: "none", count: 1, checksMatch: true, keyType: "ssh-ed25519" });
    expect(bytesEqual(priv.publicBlob, pub.blob)).toBe(true);
    expect(bytesEqual(priv.pub, pub.key)).toBe(true);
    expect(bytesEqual(priv.secret.subarray(32), pub.key)).toBe(true);
    expect(priv.privateLength % 8).toBe(0);
    expect([...priv.padding]).toEqual(Array.from({ length: priv.padding.byteLength }, (_, i) => i + 1));
    // The seed signs what the public key verifies: the pair belongs together.
    const pkcs8 = new Uint8Array([...Uint8Array.fromHex("302e020100300506032b657004220420"), ...priv.secret.subarray(0, 32)]);
    const signer = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
    const verifier = await crypto.subtle.importKey("raw", pub.key, { name: "Ed25519" }, false, ["verify"]);
    const message = new TextEncoder().encode("orchestratia");
    expect(await crypto.subtle.verify({ name: "Ed25519" }, verifier, await crypto.subtle.sign({ name: "Ed25519" }, signer, message), message)).toBe(true);

    // Only the source's daemon ever gets the private key: the people's answers and the events hold none of it.
    const secretPart = pushed.ssh_private_key.split("\n")[3];
    const shown = [JSON.stringify(made.json), JSON.stringify((await call(G, { token: w.admin })).json), JSON.stringify(await events("access_granted"))];
    for (const text of shown) {
      expect(text).not.toContain("PRIVATE KEY");
      expect(text).not.toContain(secretPart);
    }
    const stored = await env.DB.prepare("SELECT sealed_private_key FROM access_grants WHERE id = ?1").bind(g.id).first<{ sealed_private_key: string }>();
    expect(stored!.sealed_private_key).toMatch(/^v1\./);
    expect(stored!.sealed_private_key).not.toContain(secretPart);

    const [recorded] = (await events("access_granted")).filter((e: any) => e.data.grant_id === g.id);
    expect(recorded.data).toEqual({
      grant_id: g.id,
      source_server_id: w.orchestrator.id,
      source_server_name: w.orchestrator.name,
      target_server_id: w.worker.id,
      target_server_name: w.worker.name,
      privilege_level: "elevated",
      local_bind_port: 30001,
      target_port: 22,
      expires_at: g.expires_at,
    });
    expect(recorded.actor).toBe("admin@example.com");
    await expectOk(revoke(g.id));
  });

  it("answers each daemon its role in GET /api/v1/server/access-grants: the private key only to the source", async () => {
    const g = (await expectOk(grantOf({ target_port: 5432, expires_in_seconds: 3600 }), 201)).json;
    // `orchestratia grants` (cli.py cmd_grants) asks as urllib does; hub.py's reconciliation as httpx does.
    const asSource = (await expectOk(cli(w.orchestrator.apiKey, "GET", "/api/v1/server/access-grants"))).json;
    const asTarget = (await expectOk(call("/api/v1/server/access-grants", { apiKey: w.worker.apiKey }))).json;
    const common = {
      grant_id: g.id,
      source_server_id: w.orchestrator.id,
      source_server_name: w.orchestrator.name,
      target_server_id: w.worker.id,
      target_server_name: w.worker.name,
      privilege_level: "standard",
      local_bind_port: g.local_bind_port,
      target_port: 5432,
      ssh_username: "orchestratia",
      expires_at: g.expires_at,
    };
    const pushed =
      src.grantFrames.find((f) => f.type === "grant_ssh_access" && f.grant_id === g.id) ??
      (await source.socket.next((f) => f.type === "grant_ssh_access" && f.grant_id === g.id));
    expect(asSource.find((e: any) => e.grant_id === g.id)).toEqual({ role: "source", ...common, ssh_private_key: pushed.ssh_private_key });
    expect(asTarget.find((e: any) => e.grant_id === g.id)).toEqual({ role: "target", ...common, ssh_public_key: g.ssh_public_key });
    expect(JSON.stringify(asTarget)).not.toContain("PRIVATE KEY");
    // A server that takes no part in it does not see it.
    const other = await registerAgent(w.admin, `bystander-${crypto.randomUUID().slice(0, 6)}`);
    expect((await expectOk(call("/api/v1/server/access-grants", { apiKey: other.apiKey }))).json).toEqual([]);
    await expectOk(revoke(g.id));
  });

  it("gives each live grant of a source its own port, and a revoked grant's port to the next one", async () => {
    const a = (await expectOk(grantOf(), 201)).json;
    const b = (await expectOk(grantOf(), 201)).json;
    expect([a.local_bind_port, b.local_bind_port]).toEqual([30001, 30002]);
    await expectOk(revoke(a.id));
    const c = (await expectOk(grantOf(), 201)).json;
    expect(c.local_bind_port).toBe(30001);
    // Another source starts from the first port again.
    const d = (await expectOk(grant({ source_server_id: w.worker.id, target_server_id: w.orchestrator.id, privilege_level: "standard" }), 201)).json;
    expect(d.local_bind_port).toBe(30001);
    for (const g of [b, c, d]) await expectOk(revoke(g.id));
  });

  it("refuses people who are not admins, and bad grants with 422 naming the field; nothing reaches a daemon", async () => {
    const before = [source.socket.frames.length, target.socket.frames.length];
    const member = w.member.token;
    const viewer = await createUser(w.admin, "viewer");
    expectProblem(await grant({ source_server_id: w.orchestrator.id, target_server_id: w.worker.id, privilege_level: "standard" }, member), 403, "FORBIDDEN");
    expectProblem(await call(G, { token: viewer.token }), 403, "FORBIDDEN");
    expectProblem(await call(G, { token: member }), 403, "FORBIDDEN");
    expectProblem(await revoke(crypto.randomUUID()).then(() => call(`${G}/${crypto.randomUUID()}`, { method: "DELETE", token: member })), 403, "FORBIDDEN");

    const otherProject = await createProject(w.admin, "Elsewhere");
    const apart = await registerAgent(w.admin, `apart-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [otherProject.id] });
    const scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    const revoked = await registerAgent(w.admin, `revoked-${crypto.randomUUID().slice(0, 6)}`);
    expect((await call(`/api/v1/servers/${revoked.id}/revoke`, { method: "POST", token: w.admin })).status).toBeLessThan(300);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ target_server_id: w.orchestrator.id }, "target_server_id", /another server/],
      [{ source_server_id: apart.id, target_server_id: scoped.id }, "target_server_id", /share a project/],
      [{ target_port: 0 }, "target_port", /1 to 65535/],
      [{ target_port: 65536 }, "target_port", /1 to 65535/],
      [{ target_port: 22.5 }, "target_port", /whole number/],
      [{ expires_in_seconds: 30 * 86400 + 1 }, "expires_in_seconds", /30 days/],
      [{ privilege_level: "root" }, "privilege_level", /./],
      [{ target_server_id: crypto.randomUUID() }, "target_server_id", /registered server/],
      [{ source_server_id: "nope" }, "source_server_id", /UUID/],
      [{ source_server_id: scoped.id, project_id: otherProject.id }, "project_id", /both servers serve/],
      [{ source_server_id: revoked.id }, "source_server_id", /not revoked/],
    ];
    for (const [fields, path, message] of cases) {
      const refused = await grantOf(fields);
      expect(refused.status, JSON.stringify(fields)).toBe(422);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors, JSON.stringify(fields)).toEqual([{ path, message: expect.stringMatching(message) }]);
    }
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM access_grants WHERE status = 'active'").first<{ n: number }>();
    expect(count!.n).toBe(0);
    expect(source.socket.frames.slice(before[0]).filter((f) => /ssh_access|grant_access/.test(f.type))).toEqual([]);
    expect(target.socket.frames.slice(before[1]).filter((f) => /ssh_access|grant_access/.test(f.type))).toEqual([]);
  });
});

describe("tunnels between two servers", () => {
  it("relays 10 MiB each way byte for byte, in order, then closes both ends and records the tunnel", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    await until(() => src.listeners.has(g.id), Boolean, "the source's listener");
    const t = await src.connect(g.id);
    expect(t.ready).toBe(true);
    const open = target.socket.frames.find((f) => f.type === "tunnel_open" && f.tunnel_id === t.id);
    expect(open).toEqual({ type: "tunnel_open", tunnel_id: t.id, target_host: "127.0.0.1", target_port: 22 });
    const far = tgt.tunnels.get(t.id)!;

    const up = randomBytes(10 * 1024 * 1024 + 7);
    const down = randomBytes(10 * 1024 * 1024 + 4099);
    // Each side runs at most 1 MiB ahead of the other's socket, as its socket's buffers would hold it.
    await Promise.all([src.write(t.id, up, () => t.sent - far.bytes > 1 << 20), tgt.write(t.id, down, () => far.sent - t.bytes > 1 << 20)]);
    await until(
      () => [far.bytes, t.bytes],
      ([a, b]) => a === up.byteLength && b === down.byteLength,
      "both ends to have every byte",
      60_000,
    );
    expect(bytesEqual(receivedBytes(far), up)).toBe(true);
    expect(bytesEqual(receivedBytes(t), down)).toBe(true);

    // The target's service closes the connection: the source's end is closed by the hub.
    tgt.eof(t.id);
    await until(() => t.closed, Boolean, "the source's end to close");
    expect(t.closed).toBe("eof");
    const closed = await until(
      () => events("tunnel_closed"),
      (es) => es.some((e: any) => e.data.tunnel_id === t.id),
      "tunnel_closed",
    );
    expect(closed.find((e: any) => e.data.tunnel_id === t.id).data).toEqual({
      tunnel_id: t.id,
      grant_id: g.id,
      target_port: 22,
      reason: "eof",
      bytes_up: up.byteLength,
      bytes_down: down.byteLength,
    });
    expect((await events("tunnel_opened")).some((e: any) => e.data.tunnel_id === t.id)).toBe(true);
    await expectOk(revoke(g.id));
  });

  it("passes the target's refusal back when nothing listens on the port, and closes the source's end", async () => {
    const g = (await expectOk(grantOf({ target_port: 2222 }), 201)).json;
    const t = await src.connect(g.id);
    expect(t.ready).toBe(false);
    expect(t.closed).toMatch(/Connect call failed/);
    expect(source.socket.frames.find((f) => f.type === "tunnel_error" && f.tunnel_id === t.id)).toMatchObject({ error: expect.stringMatching(/Errno 111/) });
    await expectOk(revoke(g.id));
  });

  it("refuses s2s_tunnel_open for another server's grant, an unknown grant, a revoked or expired one: the target hears nothing", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    const opensBefore = () => target.socket.frames.filter((f) => f.type === "tunnel_open").length;
    const sourceOpens = () => source.socket.frames.filter((f) => f.type === "tunnel_open").length;
    const n = opensBefore();
    const m = sourceOpens();

    // The target's daemon names the grant it is the target of.
    const wrongSide = await tgt.connect(g.id, 3000);
    expect(wrongSide.closed).toMatch(/no access grant/);
    expect(target.socket.frames.find((f) => f.type === "error" && f.code === "UNKNOWN_GRANT")).toBeTruthy();
    // A grant id that exists nowhere.
    expect((await src.connect(crypto.randomUUID(), 3000)).closed).toMatch(/no access grant/);

    // Revoked.
    await expectOk(revoke(g.id));
    expect((await src.connect(g.id, 3000)).closed).toMatch(/revoked/);

    // Past its expiry, even before the hub's alarm ended it.
    const e = (await expectOk(grantOf(), 201)).json;
    await env.DB.prepare("UPDATE access_grants SET expires_at = ?2 WHERE id = ?1")
      .bind(e.id, new Date(Date.now() - 1000).toISOString())
      .run();
    expect((await src.connect(e.id, 3000)).closed).toMatch(/expired/);
    expect(opensBefore()).toBe(n);
    expect(sourceOpens()).toBe(m);
    await expectOk(revoke(e.id));
  });

  it("refuses tunnel frames for a tunnel the daemon takes no part in: they reach no other daemon", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    const t = await src.connect(g.id);
    const third = await registerAgent(w.admin, `third-${crypto.randomUUID().slice(0, 6)}`);
    const intruder = await fakeDaemon(third.apiKey);
    intruder.send({ type: "tunnel_data", tunnel_id: t.id, data: btoa("injected") });
    intruder.send({ type: "tunnel_closed", tunnel_id: t.id, reason: "eof" });
    intruder.send({ type: "tunnel_ready", tunnel_id: crypto.randomUUID() });
    const errors = await intruder.socket.collect(3, (f) => f.type === "error");
    expect(errors.map((f) => f.code)).toEqual(["UNKNOWN_TUNNEL", "UNKNOWN_TUNNEL", "UNKNOWN_TUNNEL"]);
    // The tunnel is untouched: the next bytes from the source arrive alone, and neither end was closed.
    await src.write(t.id, new TextEncoder().encode("real"));
    const far = tgt.tunnels.get(t.id)!;
    await until(
      () => far.bytes,
      (n) => n === 4,
      "the real bytes",
    );
    expect(new TextDecoder().decode(receivedBytes(far))).toBe("real");
    expect([t.closed, far.closed]).toEqual([null, null]);
    intruder.socket.ws.close();
    await expectOk(revoke(g.id));
  });

  it("closes a grant's open tunnels when it is revoked, and both daemons drop the grant", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    await until(() => src.listeners.has(g.id) && tgt.authorizedKeys.has(g.id), Boolean, "the grant on both machines");
    const t = await src.connect(g.id);
    const far = tgt.tunnels.get(t.id)!;
    await expectOk(revoke(g.id));
    await until(
      () => [t.closed, far.closed],
      ([a, b]) => Boolean(a && b),
      "both ends to close",
    );
    expect([t.closed, far.closed]).toEqual(["the access grant was revoked", "the access grant was revoked"]);
    await until(() => !src.listeners.has(g.id) && !tgt.authorizedKeys.has(g.id), Boolean, "the grant gone from both machines");
    expect(src.privateKeys.has(g.id)).toBe(false);
    expect((await call(G, { token: w.admin })).json.grants.find((x: any) => x.id === g.id)).toMatchObject({ status: "revoked", ended_at: expect.any(String) });
    expect((await events("access_revoked")).some((e: any) => e.data.grant_id === g.id)).toBe(true);
    // Revoking again changes nothing.
    expect((await expectOk(revoke(g.id))).json.status).toBe("revoked");
    expect((await events("access_revoked")).filter((e: any) => e.data.grant_id === g.id)).toHaveLength(1);
    expectProblem(await revoke(crypto.randomUUID()), 404, "NOT_FOUND");
  });

  it("expires a grant on time: its tunnels close, both daemons are told, and the expiry is an event", async () => {
    const g = (await expectOk(grantOf({ expires_in_seconds: 60 }), 201)).json;
    const t = await src.connect(g.id);
    const far = tgt.tunnels.get(t.id)!;
    await runInDurableObject(link(w.orchestrator.id), async (_, state) => state.storage.put(`grant-expiry:${g.id}`, Date.now() - 1));
    await env.DB.prepare("UPDATE access_grants SET expires_at = ?2 WHERE id = ?1")
      .bind(g.id, new Date(Date.now() - 1).toISOString())
      .run();
    await runDurableObjectAlarm(link(w.orchestrator.id));
    await until(
      () => [t.closed, far.closed],
      ([a, b]) => Boolean(a && b),
      "both ends to close",
    );
    expect(t.closed).toBe("the access grant expired");
    await until(() => !src.listeners.has(g.id) && !tgt.authorizedKeys.has(g.id), Boolean, "the grant gone from both machines");
    expect((await call(G, { token: w.admin })).json.grants.find((x: any) => x.id === g.id).status).toBe("expired");
    const [expired] = (await events("access_expired")).filter((e: any) => e.data.grant_id === g.id);
    expect(expired.actor).toBe("hub");
    expect((await call("/api/v1/server/access-grants", { apiKey: w.orchestrator.apiKey })).json.some((x: any) => x.grant_id === g.id)).toBe(false);
  });

  it("ends a tunnel when either daemon's socket ends", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    const t = await src.connect(g.id);
    const far = tgt.tunnels.get(t.id)!;
    const kept = { authorizedKeys: tgt.authorizedKeys, privateKeys: tgt.privateKeys, listeners: tgt.listeners };
    target.socket.ws.close();
    await until(() => t.closed, Boolean, "the source's end to close");
    expect(t.closed).toBe("the other server's daemon disconnected");
    target = await fakeDaemon(w.worker.apiKey);
    tgt = sshSide(target, w.worker.apiKey, [22, 5432], kept);
    // The old tunnel is gone on the target's side too: what the daemon still sends for it reaches nobody.
    const got = t.bytes;
    target.send({ type: "tunnel_data", tunnel_id: far.id, data: btoa("late") });
    target.send({ type: "ping" });
    await target.socket.next((f) => f.type === "pong");
    await source.socket.next((f) => f.type === "pong", 100).catch(() => undefined);
    expect(t.bytes).toBe(got);
    await expectOk(revoke(g.id));
  });

  it("lets a flood of tunnel_data hold at most its window on the way, while the other server's terminals stay live", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    const t = await src.connect(g.id);
    const far = tgt.tunnels.get(t.id)!;
    const term = await openSocket(`/api/v1/projects/${w.project.id}/sessions/${w.workerSession}/terminal`, { "Sec-WebSocket-Protocol": `bearer, ${w.admin}` });
    await term.next((f) => f.type === "ready");
    // 24 MiB sent as fast as the source's socket takes it, with nobody slowing it down.
    const flood = src.write(t.id, randomBytes(24 * 1024 * 1024));
    const echoes: number[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const sent = Date.now();
      term.send({ type: "input", data: btoa(`k${i}`) });
      await term.next((f) => f.type === "output" && atob(f.data).includes(`k${i}`), 5000);
      echoes.push(Date.now() - sent);
    }
    await flood;
    await until(() => far.bytes === 24 * 1024 * 1024 || Boolean(t.closed), Boolean, "the flood to arrive or its tunnel to close", 60_000);
    // Either every byte came, in order, or the tunnel was closed for falling behind; never more than the window was held.
    if (t.closed) expect(t.closed).toMatch(/fell more than \d+ bytes behind/);
    const { peakQueuedBytes } = await link(w.orchestrator.id).tunnelMemory();
    expect(peakQueuedBytes).toBeLessThanOrEqual(TUNNEL_WINDOW_BYTES);
    expect(Math.max(...echoes)).toBeLessThan(1000);
    term.ws.close();
    await expectOk(revoke(g.id));
  });

  it("keeps its tunnels when a link wakes from hibernation", async () => {
    const g = (await expectOk(grantOf(), 201)).json;
    const t = await src.connect(g.id);
    const far = tgt.tunnels.get(t.id)!;
    // Both links lose their memory; the daemons' sockets stay, and so do the tunnels.
    await evictDurableObject(link(w.orchestrator.id));
    await evictDurableObject(link(w.worker.id));
    await src.write(t.id, new TextEncoder().encode("after"));
    await until(
      () => far.bytes,
      (n) => n === 5,
      "the bytes after waking",
    );
    await tgt.write(t.id, new TextEncoder().encode("back"));
    await until(
      () => t.bytes,
      (n) => n === 4,
      "the bytes back",
    );
    expect(new TextDecoder().decode(receivedBytes(t))).toBe("back");
    await expectOk(revoke(g.id));
  });
});

describe("reconciliation", () => {
  it("converges a daemon that was away when its grant was made, and when it was revoked", async () => {
    const keptSource = { authorizedKeys: src.authorizedKeys, privateKeys: src.privateKeys, listeners: src.listeners };
    source.socket.ws.close();
    await until(
      () => call(`/api/v1/servers`, { token: w.admin }),
      () => true,
      "a tick",
    );
    const g = (await expectOk(grantOf(), 201)).json;
    expect(src.listeners.has(g.id)).toBe(false);
    // Back: hub.py reconciles on connect.
    source = await fakeDaemon(w.orchestrator.apiKey);
    src = sshSide(source, w.orchestrator.apiKey, [22], keptSource);
    await src.reconcile();
    expect(src.listeners.get(g.id)).toEqual({ bindPort: g.local_bind_port, targetPort: 22 });
    expect(src.privateKeys.get(g.id)).toMatch(/OPENSSH PRIVATE KEY/);

    // Away again while the grant is revoked: its listener is a phantom until the next reconciliation tears it down.
    source.socket.ws.close();
    const keptTarget = { authorizedKeys: tgt.authorizedKeys, privateKeys: tgt.privateKeys, listeners: tgt.listeners };
    target.socket.ws.close();
    await expectOk(revoke(g.id));
    source = await fakeDaemon(w.orchestrator.apiKey);
    src = sshSide(source, w.orchestrator.apiKey, [22], keptSource);
    expect(src.listeners.has(g.id)).toBe(true);
    await src.reconcile();
    expect(src.listeners.has(g.id)).toBe(false);
    expect(src.privateKeys.has(g.id)).toBe(false);
    // The target does not drop keys on reconciliation (hub.py leaves that to the push): the held revoke_ssh_access reaches it on connect.
    target = await fakeDaemon(w.worker.apiKey);
    tgt = sshSide(target, w.worker.apiKey, [22, 5432], keptTarget);
    await target.socket.next((f) => f.type === "revoke_ssh_access" && f.grant_id === g.id);
    expect(tgt.authorizedKeys.has(g.id)).toBe(false);
  });

  it("installs a grant's key on a target that was away when it was made", async () => {
    const keptTarget = { authorizedKeys: tgt.authorizedKeys, privateKeys: tgt.privateKeys, listeners: tgt.listeners };
    target.socket.ws.close();
    const g = (await expectOk(grantOf(), 201)).json;
    target = await fakeDaemon(w.worker.apiKey);
    tgt = sshSide(target, w.worker.apiKey, [22, 5432], keptTarget);
    expect(tgt.authorizedKeys.has(g.id)).toBe(false);
    await tgt.reconcile();
    expect(tgt.authorizedKeys.get(g.id)).toEqual({ key: g.ssh_public_key, privilegeLevel: "standard" });
    await expectOk(revoke(g.id));
  });
});

describe("orchestratia-connect", () => {
  const connect = (token: string, body: Record<string, unknown> = {}, sessionId = w.workerSession) =>
    call(`/api/v1/projects/${w.project.id}/sessions/${sessionId}/connect`, { method: "POST", token, body });
  /** connect.py: opens /ws/tunnel and sends the token first. */
  async function tunnelSocket(token: string) {
    const ws = await openSocket("/ws/tunnel");
    ws.send({ type: "auth", token });
    return ws;
  }

  it("issues a token for a session's machine that opens one tunnel through /ws/tunnel, relaying bytes both ways", async () => {
    const issued = (await expectOk(connect(w.admin, { target_port: 5432 }))).json;
    expect(issued.command).toBe(`orchestratia-connect ${issued.token}`);
    const payload = JSON.parse(new TextDecoder().decode(Uint8Array.fromBase64(issued.token.split(".")[1], { alphabet: "base64url" })));
    expect(payload).toMatchObject({ hub_url: "https://hub.test", mode: "ssh", session_id: w.workerSession, target_port: 5432 });
    expect(Date.parse(issued.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60 * 1000);

    const ws = await tunnelSocket(issued.token);
    const ok = await ws.next();
    expect(ok).toEqual({ type: "auth_ok", tunnel_id: expect.any(String) });
    // connect.py drops what comes before its local client connects, and an SSH server speaks first: the daemon is
    // asked to connect only when the person's first bytes come, and those bytes wait until it is ready.
    await new Promise((r) => setTimeout(r, 200));
    expect(target.socket.frames.some((f) => f.type === "tunnel_open" && f.tunnel_id === ok.tunnel_id)).toBe(false);
    const up = randomBytes(1024 * 1024 + 3);
    for (let at = 0; at < up.byteLength; at += 16_384) ws.send({ type: "tunnel_data", data: up.subarray(at, at + 16_384).toBase64() });
    const open = await target.socket.next((f) => f.type === "tunnel_open" && f.tunnel_id === ok.tunnel_id);
    expect(open).toEqual({ type: "tunnel_open", tunnel_id: ok.tunnel_id, target_host: "127.0.0.1", target_port: 5432 });
    const far = tgt.tunnels.get(ok.tunnel_id)!;

    await until(
      () => far.bytes,
      (n) => n === up.byteLength,
      "the bytes at the session's machine",
      20_000,
    );
    expect(bytesEqual(receivedBytes(far), up)).toBe(true);
    await tgt.write(ok.tunnel_id, new TextEncoder().encode("SSH-2.0-OpenSSH_9.6\r\n"));
    expect(await ws.next((f) => f.type === "tunnel_data")).toEqual({ type: "tunnel_data", data: btoa("SSH-2.0-OpenSSH_9.6\r\n") });

    // The machine's service closes: the person's socket hears tunnel_close and closes.
    tgt.eof(ok.tunnel_id);
    expect(await ws.next((f) => f.type === "tunnel_close")).toEqual({ type: "tunnel_close", reason: "eof" });
    await ws.closed;
    const closed = await until(
      () => events("tunnel_closed"),
      (es) => es.some((e: any) => e.data.tunnel_id === ok.tunnel_id),
      "tunnel_closed",
    );
    expect(closed.find((e: any) => e.data.tunnel_id === ok.tunnel_id).data).toMatchObject({ session_id: w.workerSession, bytes_up: up.byteLength });

    // The token was used: a replay is refused, and the daemon hears nothing of it.
    const opens = target.socket.frames.filter((f) => f.type === "tunnel_open").length;
    const replay = await tunnelSocket(issued.token);
    expect(await replay.next()).toEqual({ type: "auth_error", detail: "the connect token was used already" });
    expect((await replay.closed).code).toBe(4003);
    expect(target.socket.frames.filter((f) => f.type === "tunnel_open").length).toBe(opens);
  });

  it("refuses a token while the session's daemon is away without spending it", async () => {
    const token = (await expectOk(connect(w.admin))).json.token;
    const kept = { authorizedKeys: tgt.authorizedKeys, privateKeys: tgt.privateKeys, listeners: tgt.listeners };
    target.socket.ws.close();
    await until(
      () => call("/api/v1/servers", { token: w.admin }),
      (r) => r.json.servers.find((x: any) => x.id === w.worker.id).daemon_connected === false,
      "the daemon to be gone",
    );
    const away = await tunnelSocket(token);
    expect(await away.next()).toEqual({ type: "auth_error", detail: "the server's daemon is not connected" });
    target = await fakeDaemon(w.worker.apiKey);
    tgt = sshSide(target, w.worker.apiKey, [22, 5432], kept);
    const back = await tunnelSocket(token);
    expect(await back.next()).toEqual({ type: "auth_ok", tunnel_id: expect.any(String) });
    back.ws.close();
  });

  it("closes the daemon's connection when the person disconnects", async () => {
    const ws = await tunnelSocket((await expectOk(connect(w.admin))).json.token);
    const { tunnel_id } = await ws.next();
    ws.send({ type: "tunnel_data", data: btoa("SSH-2.0-OpenSSH_9.6\r\n") });
    await until(() => tgt.tunnels.get(tunnel_id), Boolean, "the daemon's connection");
    ws.ws.close(1000, "bye");
    await until(() => tgt.tunnels.get(tunnel_id)!.closed, Boolean, "the daemon's end to close");
    expect(tgt.tunnels.get(tunnel_id)!.closed).toBe("the person disconnected");
  });

  it("refuses viewers, ended sessions, bad ports, forged, expired and foreign tokens: nothing reaches the daemon", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    expectProblem(await connect(viewer.token), 403, "FORBIDDEN");
    const refused = await connect(w.admin, { target_port: 70000 });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors).toEqual([{ path: "target_port", message: "must be a port from 1 to 65535" }]);
    expectProblem(await connect(w.admin, {}, crypto.randomUUID()), 404, "NOT_FOUND");

    const opens = () => target.socket.frames.filter((f) => f.type === "tunnel_open").length;
    const before = opens();
    const good = (await expectOk(connect(w.admin))).json.token as string;
    const [h, p, s] = good.split(".");
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.fromBase64(p!, { alphabet: "base64url" })));
    // The same token naming another session: its signature no longer holds.
    const forged = [
      h,
      new TextEncoder().encode(JSON.stringify({ ...claims, session_id: w.orchestratorSession })).toBase64({ alphabet: "base64url", omitPadding: true }),
      s,
    ].join(".");
    const refusals: [string, RegExp][] = [
      [forged, /invalid/],
      [(await call("/api/v1/auth/login", { method: "POST", body: { email: "admin@example.com", password: "admin-password-1" } })).json.access_token, /invalid/],
      ["not-a-token", /invalid/],
    ];
    for (const [token, detail] of refusals) {
      const ws = await tunnelSocket(token);
      expect(await ws.next()).toEqual({ type: "auth_error", detail: expect.stringMatching(detail) });
      expect((await ws.closed).code).toBe(4003);
    }
    // A connect token is not an access token either.
    expectProblem(await call(`/api/v1/projects/${w.project.id}`, { token: good }), 401, "INVALID_TOKEN");
    const unauthenticated = await openSocket("/ws/tunnel");
    unauthenticated.send({ type: "tunnel_data", data: "AAAA" });
    expect(await unauthenticated.next()).toMatchObject({ type: "auth_error" });

    // The session ended after the token was made.
    const session = (
      await expectOk(
        call(`/api/v1/projects/${w.project.id}/sessions`, { method: "POST", token: w.admin, body: { server_id: w.worker.id, name: "short" } }),
        201,
      )
    ).json;
    await until(
      () => call(`/api/v1/projects/${w.project.id}/sessions/${session.id}`, { token: w.admin }),
      (r) => r.json.status === "running",
      "the session to run",
    );
    const late = (await expectOk(connect(w.admin, {}, session.id))).json.token;
    await expectOk(call(`/api/v1/projects/${w.project.id}/sessions/${session.id}`, { method: "DELETE", token: w.admin }));
    expectProblem(await connect(w.admin, {}, session.id), 409, "SESSION_ENDED");
    const ended = await tunnelSocket(late);
    expect(await ended.next()).toEqual({ type: "auth_error", detail: "Session not found" });
    expect(opens()).toBe(before);
  });
});
