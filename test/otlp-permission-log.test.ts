/**
 * Claude Code's `tool_decision` events as the permission log's second source, sent by the real OpenTelemetry log
 * exporters: they list a session's calls while its hook has logged none, once however often an export is sent again,
 * and give way to the hook's entries as soon as those arrive; after that they are not listed. Other sessions keep
 * theirs.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { hookLines, postPermissionLog } from "./fake-daemon";
import { call } from "./helpers";
import { claudeResource, exportingToHub, hubLogger, jsonOf, type Encoding } from "./otlp-exporters";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("OTLP permission log");
});

/** A session of its own on the worker's server, running a task of its own. */
async function sessionRunningTask() {
  const name = `s-${crypto.randomUUID().slice(0, 8)}`;
  const sessionId = await openSession(w.worker.apiKey, w.project.id, name);
  const taskId = await newTask(w);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${taskId}/assign`, { session_name: name }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/start`));
  return { sessionId, taskId };
}

/** A session's entries of the project's log, newest first. */
async function entriesOf(sessionId: string): Promise<any[]> {
  const reply = await call(`/api/v1/projects/${w.project.id}/permission-log?session_id=${sessionId}&limit=500`, { token: w.admin });
  expect(reply.status, reply.text).toBe(200);
  return reply.json.entries;
}

const hookLine = hookLines();

interface Decision {
  tool: string;
  decision: "accept" | "reject";
  source: string;
  at: number;
  sequence: number;
  parameters?: Record<string, unknown>;
}

/** Claude Code's `tool_decision` events of one of its sessions, exported in one flush. */
function toolDecisions(encoding: Encoding, hubSessionId: string, agentSessionId: string) {
  const claude = hubLogger({ encoding, credential: w.worker.apiKey, resource: claudeResource(hubSessionId) });
  return {
    emit(decisions: Decision[]) {
      for (const d of decisions)
        claude.logger.emit({
          body: "claude_code.tool_decision",
          timestamp: d.at,
          attributes: {
            "event.name": "tool_decision",
            "event.timestamp": new Date(d.at).toISOString(),
            "event.sequence": d.sequence,
            "session.id": agentSessionId,
            tool_name: d.tool,
            decision: d.decision,
            source: d.source,
            ...(d.parameters && { tool_parameters: JSON.stringify(d.parameters) }),
          },
        });
    },
    flush: () => claude.flush(),
  };
}

describe.each<Encoding>(["json", "protobuf"])("Claude Code's tool decisions over OTLP/HTTP %s", (encoding) => {
  it("list a session's calls while its hook logs none: once, on its task, until the hook's entries replace them", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const other = await sessionRunningTask();
    const agentSession = crypto.randomUUID();
    const t0 = Date.now() - 60_000;
    const decisions: Decision[] = [
      { tool: "Bash", decision: "accept", source: "config", at: t0, sequence: 1, parameters: { bash_command: "npm", full_command: "npm test" } },
      { tool: "Write", decision: "reject", source: "user_reject", at: t0 + 1500, sequence: 2 },
    ];
    const agent = toolDecisions(encoding, sessionId, agentSession);
    const otherAgent = toolDecisions(encoding, other.sessionId, crypto.randomUUID());
    const answers = await exportingToHub(async () => {
      agent.emit(decisions);
      otherAgent.emit([{ tool: "Read", decision: "accept", source: "config", at: t0, sequence: 1 }]);
      await agent.flush();
      await otherAgent.flush();
      // The exporter sends the same events again (as after a failed export): nothing more is listed.
      agent.emit(decisions);
      await agent.flush();
    });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    // Nothing rejected, the resent export included.
    if (encoding === "json") expect(answers.map(jsonOf)).toEqual([{}, {}, {}]);

    const listed = await entriesOf(sessionId);
    expect(listed.map((e) => [e.tool_name, e.decision, e.reason, e.source, e.task_id, e.agent_name, e.created_at])).toEqual([
      ["Write", "denied", "user_reject", "telemetry", taskId, "claude", new Date(t0 + 1500).toISOString()],
      ["Bash", "allowed", "config", "telemetry", taskId, "claude", new Date(t0).toISOString()],
    ]);
    expect(listed.map((e) => e.tool_input)).toEqual([{}, { bash_command: "npm", full_command: "npm test" }]);
    expect(await entriesOf(other.sessionId)).toMatchObject([{ tool_name: "Read", source: "telemetry", task_id: other.taskId }]);

    // The hook's entries for the session arrive: they replace the telemetry's, which are gone in the same write.
    const hook = await postPermissionLog(w.worker.apiKey, [hookLine({ session_id: sessionId, tool_name: "Bash", decision: "allowed" })]);
    expect(hook.json, hook.text).toMatchObject({ accepted: 1, dropped: 0, invalid: 0 });
    expect((await entriesOf(sessionId)).map((e) => [e.tool_name, e.source])).toEqual([["Bash", "hook"]]);

    // Telemetry after the hook's entries is not listed; the other session, with no hook entry, keeps its own.
    await exportingToHub(async () => {
      agent.emit([{ tool: "Edit", decision: "accept", source: "user_temporary", at: Date.now() - 1000, sequence: 3 }]);
      await agent.flush();
    });
    expect((await entriesOf(sessionId)).map((e) => [e.tool_name, e.source])).toEqual([["Bash", "hook"]]);
    expect((await entriesOf(other.sessionId)).map((e) => [e.tool_name, e.source])).toEqual([["Read", "telemetry"]]);
  });
});

describe("tool decisions with no hub session", () => {
  it("are rejected in the answer and listed nowhere", async () => {
    const claude = hubLogger({ encoding: "json", credential: w.worker.apiKey, resource: claudeResource(null) });
    const answers = await exportingToHub(async () => {
      claude.logger.emit({
        body: "claude_code.tool_decision",
        attributes: { "event.name": "tool_decision", "session.id": crypto.randomUUID(), tool_name: "Bash", decision: "accept", source: "config" },
      });
      await claude.flush();
    });
    expect(answers.map((a) => a.status)).toEqual([200]);
    const { partialSuccess } = jsonOf(answers[0]!);
    expect(partialSuccess.rejectedLogRecords).toBe("1");
    expect(partialSuccess.errorMessage).toContain("no hub session");
  });
});
