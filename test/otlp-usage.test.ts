/**
 * The OTLP receiver with the real OpenTelemetry exporters (JSON and protobuf) sending what Claude Code, Codex and Gemini
 * CLI send: the usage lands on the task the session is running, a cumulative series is counted once and again after a
 * restart, deltas add, an agent's own session id finds the hub session it was first sent beside, and an agent sending
 * both a metric and an event of the same request is counted once.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { until } from "./helpers";
import { claudeResource, exportingToHub, hubLogger, hubMeter, jsonOf, sessionUsage, taskUsage, type Encoding, type UsageRow } from "./otlp-exporters";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("OTLP usage");
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

const MODEL = "claude-sonnet-4-6";
const usageOf = async (taskId: string, done: (r: UsageRow) => boolean, what: string) =>
  (await until(
    () => taskUsage(taskId),
    (r) => r !== null && done(r),
    what,
  ))!;

describe.each<Encoding>(["json", "protobuf"])("Claude Code's metrics over OTLP/HTTP %s", (encoding) => {
  it("land on the running task; the same cumulative series sent again is counted once, a restarted one afresh", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const model = `${MODEL}-${encoding}`;
    const attrs = { "session.id": crypto.randomUUID(), model, "orchestratia.session_id": sessionId };
    const first = hubMeter({ encoding, credential: w.worker.apiKey, resource: claudeResource(sessionId), temporality: "cumulative" });
    const answers = await exportingToHub(async () => {
      first.cost.add(0.25, attrs);
      first.tokens.add(1000, { ...attrs, type: "input" });
      first.tokens.add(40, { ...attrs, type: "output" });
      first.tokens.add(500, { ...attrs, type: "cacheRead" });
      first.tokens.add(20, { ...attrs, type: "cacheCreation" });
      await first.flush();
      // The same cumulative values again (the next export interval, nothing new): nothing more.
      await first.flush();
      first.cost.add(0.15, attrs);
      await first.flush();
    });
    expect(answers.map((a) => [a.status, a.contentType])).toEqual(Array(3).fill([200, encoding === "json" ? "application/json" : "application/x-protobuf"]));
    if (encoding === "json") expect(jsonOf(answers[0]!)).toEqual({});
    else expect(answers[0]!.body.length).toBe(0); // an empty ExportMetricsServiceResponse: nothing rejected
    const row = await usageOf(taskId, (r) => r.cost_usd > 0.399, "the first process's usage");
    expect(row.cost_usd).toBeCloseTo(0.4, 9);
    expect(row).toMatchObject({ input_tokens: 1000, output_tokens: 40, cache_read_tokens: 500, cache_write_tokens: 20, api_ms: 0 });

    // Claude Code restarted: a new process counts from zero with a new start time, and all of it is new usage.
    const second = hubMeter({ encoding, credential: w.worker.apiKey, resource: claudeResource(sessionId), temporality: "cumulative" });
    await exportingToHub(async () => {
      second.cost.add(0.1, attrs);
      second.tokens.add(300, { ...attrs, type: "input" });
      await second.flush();
    });
    const after = await usageOf(taskId, (r) => r.cost_usd > 0.499, "the restarted process's usage");
    expect(after.cost_usd).toBeCloseTo(0.5, 9);
    expect(after.input_tokens).toBe(1300);
    const days = await env.DB.prepare("SELECT server_id, agent_type, input_tokens FROM usage_daily WHERE project_id = ? AND model = ?")
      .bind(w.project.id, model)
      .all();
    expect(days.results).toEqual([{ server_id: w.worker.id, agent_type: "claude_code", input_tokens: 1300 }]);
  });

  it("adds delta sums as they come (Claude Code's default temporality), sent with X-API-Key", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const attrs = { "session.id": crypto.randomUUID(), model: MODEL };
    const m = hubMeter({ encoding, credential: w.worker.apiKey, resource: claudeResource(sessionId), temporality: "delta", asApiKeyHeader: true });
    await exportingToHub(async () => {
      m.cost.add(0.1, attrs);
      m.tokens.add(100, { ...attrs, type: "output" });
      await m.flush();
      m.cost.add(0.2, attrs);
      m.tokens.add(50, { ...attrs, type: "output" });
      await m.flush();
      // An interval with nothing recorded adds nothing.
      await m.flush();
    });
    const row = await usageOf(taskId, (r) => r.output_tokens >= 150 && r.cost_usd > 0.299, "delta usage");
    expect(row.cost_usd).toBeCloseTo(0.3, 9);
    expect(row.output_tokens).toBe(150);
  });
});

describe.each<Encoding>(["json", "protobuf"])("agents' events over OTLP/HTTP %s", (encoding) => {
  it("counts Codex's and Gemini CLI's tokens and API time from their events, and only API time from Claude Code's", async () => {
    const { sessionId, taskId } = await sessionRunningTask();
    const hub = { "orchestratia.session_id": sessionId };
    const claude = hubLogger({ encoding, credential: w.worker.apiKey, resource: claudeResource(sessionId) });
    const codex = hubLogger({ encoding, credential: w.worker.apiKey, resource: resourceFromAttributes({ "service.name": "codex_cli_rs", ...hub }) });
    const gemini = hubLogger({ encoding, credential: w.worker.apiKey, resource: resourceFromAttributes({ "service.name": "gemini-cli", ...hub }) });
    const answers = await exportingToHub(async () => {
      // Claude Code: its metrics carry this request's cost and tokens, so only `duration_ms` is new here.
      claude.logger.emit({
        body: "claude_code.api_request",
        attributes: {
          "event.name": "api_request",
          "event.timestamp": new Date().toISOString(),
          "session.id": crypto.randomUUID(),
          model: MODEL,
          cost_usd: "0.5",
          duration_ms: 1200,
          input_tokens: 100,
          output_tokens: 10,
          cache_read_tokens: 5,
          cache_creation_tokens: 1,
        },
      });
      // Claude Code's other events are not usage.
      claude.logger.emit({ body: "claude_code.user_prompt", attributes: { "event.name": "user_prompt", prompt_length: 12 } });
      codex.logger.emit({
        attributes: {
          "event.name": "codex.sse_event",
          "event.kind": "response.completed",
          "conversation.id": crypto.randomUUID(),
          model: "gpt-5.5",
          input_token_count: 400,
          cached_token_count: 100,
          output_token_count: 30,
          reasoning_token_count: 10,
          tool_token_count: 0,
        },
      });
      codex.logger.emit({ attributes: { "event.name": "codex.sse_event", "event.kind": "response.output_text.delta", input_token_count: 999 } });
      codex.logger.emit({ attributes: { "event.name": "codex.api_request", "conversation.id": crypto.randomUUID(), model: "gpt-5.5", duration_ms: 300 } });
      gemini.logger.emit({
        attributes: {
          "event.name": "gemini_cli.api_response",
          "session.id": crypto.randomUUID(),
          model: "gemini-2.5-pro",
          duration_ms: 500,
          input_token_count: 200,
          cached_content_token_count: 50,
          output_token_count: 20,
          thoughts_token_count: 5,
          tool_token_count: 7,
          total_token_count: 232,
        },
      });
      await Promise.all([claude.flush(), codex.flush(), gemini.flush()]);
    });
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const row = await usageOf(taskId, (r) => r.api_ms >= 2000 && r.input_tokens >= 457, "the events' usage");
    expect(row).toMatchObject({
      api_ms: 1200 + 300 + 500,
      // Codex: 400 in, of which 100 cached; Gemini: 200 in, 50 of them cached, and 7 of tool-use prompts.
      input_tokens: 300 + 157,
      cache_read_tokens: 100 + 50,
      output_tokens: 30 + 25,
      cost_usd: 0,
    });
  });

  it("finds the hub session by the agent's own session id once the two were sent together, and rejects an id never linked", async () => {
    const sessionId = await openSession(w.worker.apiKey, w.project.id, `s-${crypto.randomUUID().slice(0, 8)}`);
    const claudeSession = crypto.randomUUID();
    const event = (sessionId: string, ms: number) => ({
      body: "claude_code.api_request",
      attributes: { "event.name": "api_request", "session.id": sessionId, model: MODEL, duration_ms: ms },
    });
    const named = hubLogger({ encoding, credential: w.worker.apiKey, resource: claudeResource(sessionId) });
    const unnamed = hubLogger({ encoding, credential: w.worker.apiKey, resource: claudeResource(null) });
    const answers = await exportingToHub(async () => {
      named.logger.emit(event(claudeSession, 100));
      await named.flush();
      unnamed.logger.emit(event(claudeSession, 50));
      await unnamed.flush();
      unnamed.logger.emit(event(crypto.randomUUID(), 70));
      await unnamed.flush();
    });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    if (encoding === "json") {
      expect(jsonOf(answers[1]!)).toEqual({});
      expect(jsonOf(answers[2]!)).toEqual({ partialSuccess: { rejectedLogRecords: "1", errorMessage: expect.stringContaining("orchestratia.session_id") } });
    }
    // No task is running: the session keeps it.
    const row = await until(
      () => sessionUsage(sessionId),
      (r) => (r?.api_ms ?? 0) >= 150,
      "session usage",
    );
    expect(row!.api_ms).toBe(150);
  });
});
