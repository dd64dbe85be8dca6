/**
 * Agents working in each other's sessions: `orchestratia remote exec|read`
 * and `orchestratia file send`, called the way cli.py calls them, against
 * fake daemons speaking what hub.py (`_handle_remote_exec`) and
 * file_transfer.py send and read. Every refusal is checked to reach no daemon.
 */
import { DEFAULT_PROJECT_SETTINGS } from "../src/domain/project-settings";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, daemonRegistration, expectProblem, registerAgent, registrationToken, until } from "./helpers";
import { answerRemoteExec, CHUNK_SIZE, fakeDaemon, fileTransfers, patternFile, sha256Of, type FakeDaemon, type FileTransfers } from "./fake-daemon";
import { cli, createWorld, expectOk, openSession, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
/** The worker's daemon: runs commands, receives and sends files. */
let worker: FakeDaemon;
let workerFiles: FileTransfers;
/** The orchestrator's daemon, which the commands and files come from. */
let orchestrator: FakeDaemon;
let orchestratorFiles: FileTransfers;
const commands: string[] = [];
const files = new Map([
  ["/home/dev/build.tar.gz", patternFile(50 * 1024 * 1024 + 123)],
  ["/home/dev/small.bin", patternFile(5 * CHUNK_SIZE + 17)],
  ["/home/dev/empty.txt", patternFile(0)],
]);

const P = (projectId = w.project.id) => `/api/v1/projects/${projectId}`;
const setRemote = (on: boolean, token = w.admin, projectId = w.project.id) =>
  call(P(projectId), { method: "PATCH", token, body: { settings: { remote_exec: on } } });
/** cli.py `cmd_remote_exec`: the query carries the project, the body the session, the command and the timeout. */
const remoteExec = (apiKey: string, body: Record<string, unknown>, projectId = w.project.id) =>
  cli(apiKey, "POST", `/api/v1/server/remote/exec?project_id=${projectId}`, body);
/** cli.py `cmd_file_send`, from the orchestrator's machine. */
const fileSend = (path: string, to: string, fields: Record<string, unknown> = {}, apiKey = w.orchestrator.apiKey) =>
  cli(apiKey, "POST", "/api/v1/server/remote/file-transfer", {
    target_session: to,
    project_id: w.project.id,
    filename: path.split("/").at(-1),
    file_path: path,
    file_size: files.get(path)?.size ?? 0,
    sha256: files.has(path) ? sha256Of(files.get(path)!) : "0".repeat(64),
    ...fields,
  });
const transfer = async (id: string, apiKey = w.orchestrator.apiKey) => (await expectOk(cli(apiKey, "GET", `/api/v1/server/remote/file-transfer/${id}`))).json;
const finished = (id: string, timeoutMs = 60_000, apiKey = w.orchestrator.apiKey) =>
  until(
    () => transfer(id, apiKey),
    (t) => ["completed", "failed", "rejected"].includes(t.status),
    `transfer ${id} to end`,
    timeoutMs,
  );
const events = async (type: string, projectId = w.project.id) =>
  (await call(`${P(projectId)}/events?limit=500`, { token: w.admin })).json.events.filter((e: any) => e.type === type);
/** Another server with a session of that name in the project, and its daemon. */
async function anotherDaemon(session: string) {
  const server = await registerAgent(w.admin, `${session}-${crypto.randomUUID().slice(0, 6)}`);
  await openSession(server.apiKey, w.project.id, session);
  return { apiKey: server.apiKey, daemon: await fakeDaemon(server.apiKey) };
}
/** Waits until the receiving side has `n` chunks of the transfer. */
const chunksReceived = (side: FileTransfers, id: string, n: number) =>
  until(
    () => side.received.get(id)?.indices.length ?? 0,
    (got) => got === n,
    `${n} chunks`,
  );
const execsSeen = () => worker.socket.frames.filter((f) => f.type === "remote_exec").length;

beforeAll(async () => {
  w = await createWorld("Remote work");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  worker = await fakeDaemon(w.worker.apiKey);
  workerFiles = fileTransfers(worker, files);
  orchestrator = await fakeDaemon(w.orchestrator.apiKey);
  orchestratorFiles = fileTransfers(orchestrator, files);
  answerRemoteExec(worker, (command) => {
    commands.push(command);
    if (command === "sleep 200") return null;
    if (command === "cat /var/log/huge.log") return { exit_code: 0, stdout: "x".repeat(1536 * 1024), stderr: "" };
    if (command === "make noisy") return { exit_code: 2, stdout: "é".repeat(450 * 1024), stderr: "w".repeat(300 * 1024) };
    if (command.startsWith("cat ")) return { exit_code: 0, stdout: `contents of ${command.slice(4)}\n`, stderr: "" };
    return { exit_code: 3, stdout: "total 0\n", stderr: "ls: warning\n" };
  });
});

describe("the remote_exec setting", () => {
  it("is off by default, changed by admins only, and its change is an event", async () => {
    const project = await createProject(w.admin, "Switch");
    await addMember(w.admin, project.id, w.member.id);
    expect((await expectOk(call(P(project.id), { token: w.member.token }))).json.settings).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      approve_agent_tasks: false,
      remote_exec: false,
    });
    expectProblem(await setRemote(true, w.member.token, project.id), 403, "FORBIDDEN");
    expectProblem(await setRemote(true, viewer.token, project.id), 403, "FORBIDDEN");
    expect((await expectOk(setRemote(true, w.admin, project.id))).json.settings).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      approve_agent_tasks: false,
      remote_exec: true,
    });
    const refused = await call(P(project.id), { method: "PATCH", token: w.admin, body: { settings: { remote_exec: "on" } } });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: any) => e.path)).toEqual(["settings.remote_exec"]);
    expect((await events("project_settings_changed", project.id)).map((e: any) => e.data)).toEqual([
      { settings: { ...DEFAULT_PROJECT_SETTINGS, approve_agent_tasks: false, remote_exec: true }, changed: ["remote_exec"] },
    ]);
  });
});

describe("remote exec", () => {
  beforeAll(async () => void (await expectOk(setRemote(true))));

  it("runs the command through the session's daemon and answers its exit code and output; the command is an event, never its output", async () => {
    const ran = await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "ls -la /srv", timeout: 30 }));
    expect(ran.json).toEqual({ exit_code: 3, stdout: "total 0\n", stderr: "ls: warning\n" });
    const asked = worker.socket.frames.filter((f) => f.type === "remote_exec").at(-1);
    expect(asked).toEqual({ type: "remote_exec", request_id: expect.any(String), command: "ls -la /srv", session_id: w.workerSession });
    // `remote read` is `cat <path>` with the same call.
    expect((await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "cat /etc/hostname", timeout: 30 }))).json).toEqual({
      exit_code: 0,
      stdout: "contents of /etc/hostname\n",
      stderr: "",
    });
    const recorded = (await events("remote_exec")).slice(-2);
    expect(recorded.map((e: any) => [e.actor, e.data])).toEqual([
      [
        `agent:${w.orchestrator.name}`,
        { session_id: w.workerSession, session_name: "worker", server_name: w.worker.name, command: "ls -la /srv", exit_code: 3 },
      ],
      [
        `agent:${w.orchestrator.name}`,
        { session_id: w.workerSession, session_name: "worker", server_name: w.worker.name, command: "cat /etc/hostname", exit_code: 0 },
      ],
    ]);
    expect(JSON.stringify(recorded)).not.toContain("total 0");
  });

  it("runs the command from the session's working directory, single-quoted, and from the daemon's own folder on a Windows server", async () => {
    const folder = `/srv/it's a "dir" $HOME \`id\``;
    const session = (
      await expectOk(cli(w.worker.apiKey, "POST", "/api/v1/server/sessions", { name: "in-folder", project_id: w.project.id, working_directory: folder }), 201)
    ).json.id;
    await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "in-folder", command: "ls -la\npwd" }));
    expect(worker.socket.frames.filter((f) => f.type === "remote_exec").at(-1)).toEqual({
      type: "remote_exec",
      request_id: expect.any(String),
      command: `cd -- '/srv/it'\\''s a "dir" $HOME \`id\`' || exit 1\nls -la\npwd`,
      session_id: session,
    });
    expect((await events("remote_exec")).at(-1).data).toEqual({
      session_id: session,
      session_name: "in-folder",
      server_name: w.worker.name,
      command: "ls -la\npwd",
      working_directory: folder,
      exit_code: 3,
    });
    // cmd.exe is no POSIX shell: a Windows daemon gets the command as given.
    const token = await registrationToken(w.admin, {});
    const windows = await expectOk(
      call("/api/v1/servers/register", { body: { ...daemonRegistration(`win-${crypto.randomUUID().slice(0, 6)}`, token), os: "windows" } }),
      201,
    );
    await expectOk(
      cli(windows.json.api_key, "POST", "/api/v1/server/sessions", { name: "on-windows", project_id: w.project.id, working_directory: "C:\\work" }),
      201,
    );
    const win = await fakeDaemon(windows.json.api_key);
    answerRemoteExec(win, () => ({ exit_code: 0, stdout: "", stderr: "" }));
    await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "on-windows", command: "dir" }));
    expect(win.socket.frames.find((f) => f.type === "remote_exec").command).toBe("dir");
    win.socket.ws.close(1000, "done");
  });

  it("cuts output over 1 MiB and says so, whatever the size of the daemon's frame", async () => {
    const huge = (await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "cat /var/log/huge.log" }))).json;
    const [kept, note] = huge.stdout.split("\n[output cut by the hub");
    expect(kept).toBe("x".repeat(kept.length));
    expect(note).toBe(`: this stream had ${1536 * 1024} bytes, the first ${kept.length} are shown; a command's output is kept to ${1024 * 1024} bytes]\n`);
    expect(huge.stdout.length).toBeLessThanOrEqual(1024 * 1024);
    expect(kept.length).toBeGreaterThan(1024 * 1024 - 300);
    // Two streams over the bound together: stderr, under half of it, stays whole; stdout keeps the rest, cut between characters.
    const noisy = (await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "make noisy" }))).json;
    expect(noisy.exit_code).toBe(2);
    expect(noisy.stderr).toBe("w".repeat(300 * 1024));
    const [stdout, said] = noisy.stdout.split("\n[output cut by the hub");
    // Two bytes a character: whole characters only, within stdout's share.
    expect(stdout).toBe("é".repeat(stdout.length));
    expect(said).toContain(`this stream had ${900 * 1024} bytes, the first ${2 * stdout.length} are shown`);
    expect(new TextEncoder().encode(noisy.stdout + noisy.stderr).byteLength).toBeLessThanOrEqual(1024 * 1024);
    expect(2 * stdout.length).toBeGreaterThan(1024 * 1024 - 300 * 1024 - 300);
  });

  it("answers 504 when the daemon does not answer in time, 409 when it is offline or leaves before answering", async () => {
    const slow = await remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "sleep 200", timeout: 1 });
    expectProblem(slow, 504, "DAEMON_TIMEOUT");
    expect((await events("remote_exec")).at(-1).data).toMatchObject({ command: "sleep 200", exit_code: null, outcome: "timed out" });

    const away = await registerAgent(w.admin, `away-${crypto.randomUUID().slice(0, 6)}`);
    await openSession(away.apiKey, w.project.id, "away");
    const before = (await events("remote_exec")).length;
    expectProblem(await remoteExec(w.orchestrator.apiKey, { session_name: "away", command: "uptime" }), 409, "DAEMON_OFFLINE");
    expect((await events("remote_exec")).length).toBe(before);

    const leaving = await fakeDaemon(away.apiKey);
    const asked = remoteExec(w.orchestrator.apiKey, { session_name: "away", command: "make deploy", timeout: 30 });
    await leaving.socket.next((f) => f.type === "remote_exec");
    leaving.socket.ws.close(1000, "bye");
    expectProblem(await asked, 409, "DAEMON_OFFLINE");
    expect((await events("remote_exec")).at(-1).data).toMatchObject({ command: "make deploy", exit_code: null, outcome: "the daemon disconnected" });
  });

  it("is refused, with nothing reaching a daemon: setting off, another project, a project the server does not serve, an unknown session, people, bad input", async () => {
    const seen = execsSeen();
    const other = await createProject(w.admin, "Elsewhere");
    await openSession(w.worker.apiKey, other.id, "elsewhere");
    // The setting is off in the other project.
    expectProblem(await remoteExec(w.orchestrator.apiKey, { session_name: "elsewhere", command: "id" }, other.id), 403, "REMOTE_EXEC_DISABLED");
    await expectOk(setRemote(true, w.admin, other.id));
    // A session of another project is not one of this project's.
    expectProblem(await remoteExec(w.orchestrator.apiKey, { session_name: "elsewhere", command: "id" }), 404, "NOT_FOUND");
    expectProblem(await remoteExec(w.orchestrator.apiKey, { session_name: "nobody", command: "id" }), 404, "NOT_FOUND");
    // A server that does not serve the project cannot reach into it.
    const outsider = await registerAgent(w.admin, `outsider-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [other.id] });
    expectProblem(await remoteExec(outsider.apiKey, { session_name: "worker", command: "id" }), 404, "NOT_FOUND");
    // People (admins included) have no key: the route is the agents'.
    for (const token of [viewer.token, w.member.token, w.admin]) {
      expectProblem(
        await call(`/api/v1/server/remote/exec?project_id=${w.project.id}`, { token, body: { session_name: "worker", command: "id" } }),
        401,
        "UNAUTHORIZED",
      );
    }
    for (const [body, path] of [
      [{ session_name: "worker", command: "id", timeout: 121 }, "timeout"],
      [{ session_name: "worker", command: "id", timeout: 0 }, "timeout"],
      [{ session_name: "worker", command: "" }, "command"],
      [{ command: "id" }, "session_name"],
    ] as const) {
      const refused = await remoteExec(w.orchestrator.apiKey, body);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors.map((e: any) => e.path)).toEqual([path]);
    }
    expectProblem(
      await cli(w.orchestrator.apiKey, "POST", "/api/v1/server/remote/exec?project_id=nope", { session_name: "worker", command: "id" }),
      422,
      "VALIDATION_FAILED",
    );
    await expectOk(setRemote(false));
    try {
      expectProblem(await remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "id" }), 403, "REMOTE_EXEC_DISABLED");
    } finally {
      await expectOk(setRemote(true));
    }
    await expectOk(remoteExec(w.orchestrator.apiKey, { session_name: "worker", command: "echo last" }));
    // Only the last command reached the daemon.
    expect(execsSeen()).toBe(seen + 1);
    expect(commands.at(-1)).toBe("echo last");
  });
});

describe("agent-to-agent file transfer", () => {
  beforeAll(async () => void (await expectOk(setRemote(true))));

  it("relays a 50 MiB file from the sender's daemon to the receiver's, every chunk in order, and checks its sha256", async () => {
    const path = "/home/dev/build.tar.gz";
    const file = files.get(path)!;
    const started = await expectOk(fileSend(path, "worker"));
    const id = started.json.transfer_id;
    const done = await finished(id, 120_000);
    const chunks = Math.ceil(file.size / CHUNK_SIZE);
    expect(done).toEqual({
      transfer_id: id,
      status: "completed",
      filename: "build.tar.gz",
      file_size: file.size,
      chunks_relayed: chunks,
      total_chunks: chunks,
      error: null,
    });
    const got = workerFiles.received.get(id)!;
    expect(got).toMatchObject({ filename: "build.tar.gz", fileSize: file.size, senderSession: w.orchestrator.name, bytes: file.size, verified: true });
    expect(got.indices).toEqual(Array.from({ length: chunks }, (_, i) => i));
    // The sender heard the acceptance, was asked for the file at its path, and got the receiver's acknowledgement.
    expect(orchestrator.socket.frames.find((f) => f.type === "file_send_start" && f.transfer_id === id)).toEqual({
      type: "file_send_start",
      transfer_id: id,
      file_path: path,
    });
    expect(orchestratorFiles.outcomes.get(id)).toEqual([
      { type: "file_accepted", transfer_id: id },
      { type: "file_ack", transfer_id: id, sha256_verified: true },
    ]);
    expect(worker.socket.frames.find((f) => f.type === "file_offer" && f.transfer_id === id)).toEqual({
      type: "file_offer",
      transfer_id: id,
      filename: "build.tar.gz",
      file_size: file.size,
      sha256: sha256Of(file),
      sender_session: w.orchestrator.name,
      session_id: w.workerSession,
    });
    const ends = [...(await events("file_transfer_started")), ...(await events("file_transfer_completed"))].filter((e: any) => e.data.transfer_id === id);
    expect(ends.map((e: any) => [e.type, e.actor, e.data.status, e.data.to_session_name])).toEqual([
      ["file_transfer_started", `agent:${w.orchestrator.name}`, "pending", "worker"],
      ["file_transfer_completed", `agent:${w.orchestrator.name}`, "completed", "worker"],
    ]);
  }, 180_000);

  it("sends an empty file, and between two sessions of one server", async () => {
    const empty = await finished((await expectOk(fileSend("/home/dev/empty.txt", "worker"))).json.transfer_id);
    expect(empty).toMatchObject({ status: "completed", file_size: 0, chunks_relayed: 0 });
    await openSession(w.orchestrator.apiKey, w.project.id, "reviewer");
    const id = (await expectOk(fileSend("/home/dev/small.bin", "reviewer"))).json.transfer_id;
    expect(await finished(id)).toMatchObject({ status: "completed", chunks_relayed: 6, total_chunks: 6 });
    expect(orchestratorFiles.received.get(id)).toMatchObject({ verified: true, bytes: files.get("/home/dev/small.bin")!.size, indices: [0, 1, 2, 3, 4, 5] });
  });

  it("fails on chunks out of order, telling both daemons", async () => {
    const { apiKey, daemon } = await anotherDaemon("shuffler");
    const sender = { apiKey };
    const sent = fileTransfers(daemon, files, { swapChunks: [1, 2] });
    const id = (await expectOk(fileSend("/home/dev/small.bin", "worker", {}, sender.apiKey))).json.transfer_id;
    const failed = await finished(id, 10_000, sender.apiKey);
    expect(failed).toMatchObject({ status: "failed", chunks_relayed: 1, error: "Chunk 2 arrived when chunk 1 was expected: chunks must come in order" });
    expect(sent.outcomes.get(id)).toEqual([
      { type: "file_accepted", transfer_id: id },
      { type: "file_error", transfer_id: id, error: failed.error },
    ]);
    expect(workerFiles.received.get(id)).toMatchObject({ indices: [0], error: failed.error });
    expect(workerFiles.received.get(id)!.verified).toBeUndefined();
    expect((await events("file_transfer_failed")).find((e: any) => e.data.transfer_id === id).data).toMatchObject({ status: "failed", error: failed.error });
    daemon.socket.ws.close(1000, "done");
  });

  it("fails when the bytes do not hash to the sha256 offered, before the receiver keeps them", async () => {
    const id = (await expectOk(fileSend("/home/dev/small.bin", "worker", { sha256: "a".repeat(64) }))).json.transfer_id;
    const failed = await finished(id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatch(/^sha256 mismatch: 327697 bytes hashing to [0-9a-f]{64} were relayed; 327697 bytes with sha256 a{64} were offered$/);
    expect(worker.socket.frames.some((f) => f.type === "file_complete" && f.transfer_id === id)).toBe(false);
    expect(workerFiles.received.get(id)!.error).toBe(failed.error);
    expect(orchestratorFiles.outcomes.get(id)!.at(-1)).toEqual({ type: "file_error", transfer_id: id, error: failed.error });
  });

  it("fails when the receiver's copy does not verify", async () => {
    const { daemon } = await anotherDaemon("garbler");
    fileTransfers(daemon, files, { corrupt: true });
    const id = (await expectOk(fileSend("/home/dev/small.bin", "garbler"))).json.transfer_id;
    const failed = await finished(id);
    expect(failed).toMatchObject({
      status: "failed",
      error: `sha256 mismatch: the receiver's copy does not hash to ${sha256Of(files.get("/home/dev/small.bin")!)}`,
    });
    expect(orchestratorFiles.outcomes.get(id)!.at(-1)).toEqual({ type: "file_error", transfer_id: id, error: failed.error });
    daemon.socket.ws.close(1000, "done");
  });

  it("fails when either daemon disconnects mid-way, and the other is told", async () => {
    // The receiver leaves after the third chunk.
    const { daemon: receiver } = await anotherDaemon("flaky");
    const got = fileTransfers(receiver, files);
    const { apiKey: slowKey, daemon: sender } = await anotherDaemon("stalling");
    const slow = { apiKey: slowKey };
    fileTransfers(sender, files, { pauseAfter: 3 });
    const first = (await expectOk(fileSend("/home/dev/small.bin", "flaky", {}, slow.apiKey))).json.transfer_id;
    await chunksReceived(got, first, 3);
    receiver.socket.ws.close(1000, "bye");
    expect(await finished(first, 10_000, slow.apiKey)).toMatchObject({ status: "failed", error: "The receiving daemon disconnected" });
    expect(sender.socket.frames.filter((f) => f.transfer_id === first).at(-1)).toEqual({
      type: "file_error",
      transfer_id: first,
      error: "The receiving daemon disconnected",
    });

    // The sender leaves after the third chunk.
    const second = (await expectOk(fileSend("/home/dev/small.bin", "worker", {}, slow.apiKey))).json.transfer_id;
    await chunksReceived(workerFiles, second, 3);
    sender.socket.ws.close(1000, "bye");
    await until(
      () => workerFiles.received.get(second)?.error,
      (e) => e !== undefined,
      "the receiver told",
    );
    expect(workerFiles.received.get(second)!.error).toBe("The sending daemon disconnected");
    expect(await transfer(second, slow.apiKey)).toMatchObject({ status: "failed", chunks_relayed: 3, error: "The sending daemon disconnected" });
  });

  it("is refused before any daemon hears of it", async () => {
    const offers = () => worker.socket.frames.filter((f) => f.type === "file_offer").length;
    const seen = offers();
    for (const [filename, rule] of [
      ["../etc/passwd", "must be a plain file name, without / or \\"],
      ["a\\b", "must be a plain file name, without / or \\"],
      ["..", "must not be . or .."],
      ["bad\nname", "must not hold control characters"],
      ["x".repeat(256), "must be at most 255 bytes"],
    ]) {
      const refused = await fileSend("/home/dev/small.bin", "worker", { filename });
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors).toEqual([{ path: "filename", message: rule }]);
    }
    const badHash = await fileSend("/home/dev/small.bin", "worker", { sha256: "XYZ" });
    expect(badHash.json.errors.map((e: any) => e.path)).toEqual(["sha256"]);
    expectProblem(await fileSend("/home/dev/small.bin", "nobody"), 404, "NOT_FOUND");
    const away = await registerAgent(w.admin, `gone-${crypto.randomUUID().slice(0, 6)}`);
    await openSession(away.apiKey, w.project.id, "gone");
    expectProblem(await fileSend("/home/dev/small.bin", "gone"), 409, "DAEMON_OFFLINE");
    // The sender's own daemon must be there to read the file.
    expectProblem(await fileSend("/home/dev/small.bin", "worker", {}, away.apiKey), 409, "DAEMON_OFFLINE");
    const other = await createProject(w.admin, "Files elsewhere");
    expectProblem(await fileSend("/home/dev/small.bin", "worker", { project_id: other.id }), 403, "REMOTE_EXEC_DISABLED");
    expectProblem(await call("/api/v1/server/remote/file-transfer", { token: w.admin, body: { target_session: "worker" } }), 401, "UNAUTHORIZED");
    await expectOk(setRemote(false));
    try {
      expectProblem(await fileSend("/home/dev/small.bin", "worker"), 403, "REMOTE_EXEC_DISABLED");
    } finally {
      await expectOk(setRemote(true));
    }
    expect(offers()).toBe(seen);
    // A transfer is the sending server's to read.
    const id = (await expectOk(fileSend("/home/dev/small.bin", "worker"))).json.transfer_id;
    await finished(id);
    expectProblem(await cli(w.worker.apiKey, "GET", `/api/v1/server/remote/file-transfer/${id}`), 404, "NOT_FOUND");
    expectProblem(await cli(w.orchestrator.apiKey, "GET", "/api/v1/server/remote/file-transfer/not-a-uuid"), 404, "NOT_FOUND");
  });
});
