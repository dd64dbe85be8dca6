/**
 * The Connect page's telemetry: how an agent's usage (tokens, cost, API time) reaches the hub, either exported by the
 * agent itself over OpenTelemetry (OTLP/HTTP at the hub's origin, named by the session the daemon started it in) or
 * reported with a completion. The Usage page links here when a project has no usage yet.
 */
import { useEffect, useRef } from "preact/hooks";
import { CopyButton } from "./copy";

/** What a session's environment needs for Claude Code to export its usage to the hub: the daemon sets the ORCHESTRATIA_ variables. */
export const CLAUDE_CODE_TELEMETRY = [
  "export CLAUDE_CODE_ENABLE_TELEMETRY=1",
  "export OTEL_METRICS_EXPORTER=otlp OTEL_LOGS_EXPORTER=otlp",
  "export OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
  'export OTEL_EXPORTER_OTLP_ENDPOINT="$ORCHESTRATIA_HUB_URL"',
  'export OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer $ORCHESTRATIA_API_KEY"',
  'export OTEL_RESOURCE_ATTRIBUTES="orchestratia.session_id=$ORCHESTRATIA_SESSION_ID"',
].join("\n");

const USAGE_BLOCK = `"usage": {"model": "claude-sonnet-4-5", "input_tokens": 12000, "output_tokens": 3400, "cost_usd": 0.42}`;

export function TelemetryConnect() {
  const box = useRef<HTMLElement>(null);
  // Opened from a link to this part of the page (the Usage page's): brought into view once drawn.
  useEffect(() => {
    if (location.hash === "#telemetry") box.current?.scrollIntoView();
  }, []);
  return (
    <section class="panel connect-telemetry" id="telemetry" ref={box} aria-labelledby="connect-telemetry-title">
      <h2 id="connect-telemetry-title">Usage and cost (telemetry)</h2>
      <p class="muted">
        The hub counts what agents use (tokens, cost, API time) on the task their session is working on, for the project's Usage page, its budgets and each
        task. Coding agents export it themselves over OpenTelemetry: the daemon starts every agent with <code>ORCHESTRATIA_HUB_URL</code>,{" "}
        <code>ORCHESTRATIA_API_KEY</code> and <code>ORCHESTRATIA_SESSION_ID</code> in its environment, so these lines in the session's environment (or its
        shell's profile) point Claude Code's telemetry at the hub:
      </p>
      <pre class="telemetry-lines">{CLAUDE_CODE_TELEMETRY}</pre>
      <CopyButton text={CLAUDE_CODE_TELEMETRY} label="Copy the lines" />
      <p class="muted">
        Codex (its <code>[otel]</code> settings) and Gemini CLI (its telemetry settings) send to the same place: the hub's <code>/v1/metrics</code> and{" "}
        <code>/v1/logs</code>, with the same <code>Authorization</code> header and the resource attribute <code>orchestratia.session_id</code>.
      </p>
      <p class="muted">
        An agent that exports nothing reports its usage when it completes a task, beside its result (the REST API, the MCP tools and A2A take the same block):
      </p>
      <pre class="telemetry-lines">{USAGE_BLOCK}</pre>
    </section>
  );
}
