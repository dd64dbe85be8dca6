/**
 * A person's `orchestratia-connect` tunnel over time: the session's link
 * hibernating between two frames, a daemon that never says the port is open,
 * and the person losing their access while bytes flow. The daemon is faked as
 * tunnel.py speaks (test/fake-tunnels.ts); the person as connect.py does.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, registerAgent, until } from "./helpers";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";
import { receivedBytes, sshSide, type SshSide } from "./fake-tunnels";
import { openSocket } from "./sockets";
import { createWorld, expectOk, openSession, type World } from "./task-world";
import { HELD_WAIT_MS, lostHeldBytes, restoredTunnel } from "../src/server-link/tunnel-state";

let w: World;
/** A server that serves the world's project alone, so its members may type on it and reach its machine. */
let box: { id: string; apiKey: string };
let session: string;
let daemon: FakeDaemon;
let machine: SshSide;

const link = () => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(box.id));
const connectToken = async (token: string, targetPort = 22) =>
  (await expectOk(call(`/api/v1/projects/${w.project.id}/sessions/${session}/connect`, { method: "POST", token, body: { target_port: targetPort } }))).json
    .token as string;
const text = (s: string) => new TextEncoder().encode(s).toBase64();
const closedEvent = (tunnelId: string) =>
  until(
    async () => (await call(`/api/v1/projects/${w.project.id}/events?limit=500`, { token: w.admin })).json.events,
    (es: any[]) => es.some((e) => e.type === "tunnel_closed" && e.data.tunnel_id === tunnelId),
    "tunnel_closed",
  ).then((es: any[]) => es.find((e) => e.type === "tunnel_closed" && e.data.tunnel_id === tunnelId));

/** connect.py: the token first, then the local client's bytes as they come. */
async function openTunnel(token: string) {
  const ws = await openSocket("/ws/tunnel");
  ws.send({ type: "auth", token });
  const { tunnel_id } = await ws.next((f) => f.type === "auth_ok");
  return { ws, id: tunnel_id as string };
}

beforeAll(async () => {
  w = await createWorld("Person tunnels");
  box = await registerAgent(w.admin, `box-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
  session = await openSession(box.apiKey, w.project.id, "box");
  daemon = await fakeDaemon(box.apiKey);
  machine = sshSide(daemon, box.apiKey, [22]);
  machine.hanging.add(2222);
});

describe("a person's tunnel across the link's hibernation", () => {
  it("relays both ways when the link slept between two frames, and counts every byte in its closing event", async () => {
    const t = await openTunnel(await connectToken(w.member.token));
    t.ws.send({ type: "tunnel_data", data: text("hello") });
    await until(
      () => machine.tunnels.get(t.id)?.bytes,
      (n) => n === 5,
      "the first bytes at the machine",
    );
    await machine.write(t.id, new TextEncoder().encode("SSH-2.0\r\n"));
    expect(await t.ws.next((f) => f.type === "tunnel_data")).toEqual({ type: "tunnel_data", data: text("SSH-2.0\r\n") });
    // What decides the next frame's way is in storage before the link may sleep (byte counts follow within a second).
    await until(
      () => runInDurableObject(link(), (_, state) => state.storage.get<any>(`tunnel:${t.id}`)),
      (kept) => kept?.ready === true && kept.up === 5 && kept.down === 9,
      "the tunnel's state kept",
    );

    await evictDurableObject(link());
    t.ws.send({ type: "tunnel_data", data: text(" again") });
    await until(
      () => machine.tunnels.get(t.id)?.bytes,
      (n) => n === 11,
      "the person's bytes after the link woke",
    );
    expect(new TextDecoder().decode(receivedBytes(machine.tunnels.get(t.id)!))).toBe("hello again");

    await evictDurableObject(link());
    await machine.write(t.id, new TextEncoder().encode("back"));
    expect(await t.ws.next((f) => f.type === "tunnel_data")).toEqual({ type: "tunnel_data", data: text("back") });

    t.ws.ws.close(1000, "bye");
    await until(() => machine.tunnels.get(t.id)!.closed, Boolean, "the machine's end to close");
    expect((await closedEvent(t.id)).data).toMatchObject({ bytes_up: 11, bytes_down: 13, reason: "the person disconnected" });
  });

  it("keeps no tunnel whose held bytes a restart lost: one woken between its opening and the daemon's answer cannot go on", () => {
    // A link with a timer pending does not hibernate, so only a restart loses what a tunnel held; such a tunnel ends when loaded.
    const record = {
      id: "t",
      side: "person" as const,
      grantId: null,
      projectId: "p",
      peerServerId: null,
      userId: "u",
      sessionId: "s",
      targetPort: 22,
      openedAt: 0,
    };
    expect(lostHeldBytes(restoredTunnel({ ...record, opened: true, ready: false }))).toBe(true);
    expect(lostHeldBytes(restoredTunnel({ ...record, opened: false, ready: false }))).toBe(false);
    expect(lostHeldBytes(restoredTunnel({ ...record, opened: true, ready: true }))).toBe(false);
    // A tunnel kept by a link before these flags were stored was past its opening.
    expect(restoredTunnel(record)).toMatchObject({ opened: true, ready: true, up: 0, down: 0 });
    expect(lostHeldBytes(restoredTunnel({ ...record, side: "source", opened: true, ready: false }))).toBe(false);
  });

  it(
    "ends a tunnel whose bytes wait past the bound for a daemon that never says the port is open, telling both sides",
    async () => {
      const t = await openTunnel(await connectToken(w.member.token, 2222));
      const sent = Date.now();
      t.ws.send({ type: "tunnel_data", data: text("SSH-2.0-client\r\n") });
      const close = await t.ws.next((f) => f.type === "tunnel_close", HELD_WAIT_MS + 5000);
      expect(close.reason).toBe(`the machine's port 2222 did not open within ${HELD_WAIT_MS / 1000} s`);
      expect(Date.now() - sent).toBeGreaterThanOrEqual(HELD_WAIT_MS - 100);
      await t.ws.closed;
      await until(() => machine.tunnels.get(t.id)?.closed, Boolean, "the daemon told");
      expect(machine.tunnels.get(t.id)!.closed).toBe(close.reason);
      expect(machine.tunnels.get(t.id)!.bytes).toBe(0);
    },
    HELD_WAIT_MS + 15_000,
  );
});

describe("a person's tunnel when their access changes", () => {
  it("closes at once when the person is removed from the project while bytes flow: the daemon is told and nothing more reaches it", async () => {
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    const t = await openTunnel(await connectToken(person.token));
    for (let i = 0; i < 5; i++) t.ws.send({ type: "tunnel_data", data: text(`k${i}`) });
    await until(
      () => machine.tunnels.get(t.id)?.bytes,
      (n) => n === 10,
      "the bytes before the removal",
    );

    await expectOk(call(`/api/v1/projects/${w.project.id}/members/${person.id}`, { method: "DELETE", token: w.admin }));
    // The route answered after the links were told: the tunnel is already closed on both sides.
    expect(machine.tunnels.get(t.id)!.closed).toBe("your access to this session's server changed");
    expect(await t.ws.next((f) => f.type === "tunnel_close")).toEqual({ type: "tunnel_close", reason: "your access to this session's server changed" });
    try {
      t.ws.send({ type: "tunnel_data", data: text("after") });
    } catch {
      // The socket may be closed already.
    }
    daemon.send({ type: "ping" });
    await daemon.socket.next((f) => f.type === "pong");
    expect(machine.tunnels.get(t.id)!.bytes).toBe(10);
    expect((await closedEvent(t.id)).data).toMatchObject({ user_id: person.id, reason: "your access to this session's server changed" });
  });

  it("closes when the link's periodic check finds the access gone though nobody told it", async () => {
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    const t = await openTunnel(await connectToken(person.token));
    t.ws.send({ type: "tunnel_data", data: text("x") });
    await until(
      () => machine.tunnels.get(t.id)?.bytes,
      (n) => n === 1,
      "the first byte",
    );
    // The alarm is set to look again within the check's interval.
    const alarm = await runInDurableObject(link(), (_, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm! - Date.now()).toBeLessThanOrEqual(60_000);

    // Still allowed: the check keeps the tunnel.
    await runDurableObjectAlarm(link());
    t.ws.send({ type: "tunnel_data", data: text("y") });
    await until(
      () => machine.tunnels.get(t.id)?.bytes,
      (n) => n === 2,
      "a byte after a check that passed",
    );

    await env.DB.prepare("DELETE FROM project_members WHERE user_id = ?1").bind(person.id).run();
    await runDurableObjectAlarm(link());
    expect(await t.ws.next((f) => f.type === "tunnel_close")).toEqual({ type: "tunnel_close", reason: "your access to this session's server changed" });
    await until(() => machine.tunnels.get(t.id)?.closed, Boolean, "the daemon told");
  });
});

describe("a person's tunnel when its project goes", () => {
  it("closes when the session's project is deleted, the daemon told", async () => {
    const project = await createProject(w.admin, "Short-lived");
    const server = await registerAgent(w.admin, `short-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const sid = await openSession(server.apiKey, project.id, "short");
    const its = sshSide(await fakeDaemon(server.apiKey), server.apiKey, [22]);
    const token = (await expectOk(call(`/api/v1/projects/${project.id}/sessions/${sid}/connect`, { method: "POST", token: w.admin, body: {} }))).json.token;
    const t = await openTunnel(token);
    t.ws.send({ type: "tunnel_data", data: text("x") });
    await until(
      () => its.tunnels.get(t.id)?.bytes,
      (n) => n === 1,
      "the first byte",
    );
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "DELETE", token: w.admin }));
    expect(await t.ws.next((f) => f.type === "tunnel_close")).toEqual({ type: "tunnel_close", reason: "the project was deleted" });
    await until(
      () => its.tunnels.get(t.id)?.closed,
      (reason) => reason === "the project was deleted",
      "the daemon told",
    );
  });
});
