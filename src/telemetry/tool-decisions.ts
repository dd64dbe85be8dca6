/**
 * A decoded export's tool decisions (Claude Code's `tool_decision` events, agent-signals.ts) as permission-log
 * entries still to be attributed to a hub session: one per event, with the identity a resent export repeats, so that
 * the entry it makes is written once. Pure.
 */
import { canonicalJson } from "../domain/canonical-json";
import type { PermissionDecision } from "../domain/permission-decisions";
import { eventOf } from "./agent-signals";
import type { Attributes, DecodedExport } from "./otlp-model";
import { timeOf, who } from "./usage-items";

export interface ToolDecisionItem extends ReturnType<typeof who> {
  /** What makes the event itself, before hashing into the entry's id: its session, time, sequence and content. */
  identity: string;
  at: string;
  toolName: string;
  decision: PermissionDecision;
  toolInput: Record<string, unknown>;
  /** How the agent decided (`config`, `user_temporary`, `user_reject`, ...), kept as the entry's reason. */
  how: string | null;
}

const TOOL_DECISION_EVENTS = { "claude_code.tool_decision": true } as const;

const DECISIONS: Record<string, PermissionDecision> = { accept: "allowed", reject: "denied" };

/** `tool_parameters` (JSON text, sent under OTEL_LOG_TOOL_DETAILS=1) when it is an object; `{}` otherwise. */
function toolInputOf(a: Attributes): Record<string, unknown> {
  const raw = a.tool_parameters;
  if (typeof raw !== "string") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The tool decisions an export carries; records without a tool or with another decision are left. */
export function toolDecisionsOf(decoded: DecodedExport, receivedAt: string): ToolDecisionItem[] {
  if (decoded.signal !== "logs") return [];
  const items: ToolDecisionItem[] = [];
  for (const resource of decoded.resources)
    for (const record of resource.records) {
      if (!eventOf(record, resource.attributes, TOOL_DECISION_EVENTS)) continue;
      const a = record.attributes;
      const decision = typeof a.decision === "string" ? DECISIONS[a.decision] : undefined;
      if (typeof a.tool_name !== "string" || a.tool_name === "" || !decision) continue;
      const ids = who(a, resource.attributes);
      const timeNs = record.timeNs > 0n ? record.timeNs : record.observedNs;
      items.push({
        ...ids,
        identity: canonicalJson({
          hub: ids.hubSessionId,
          agent: ids.agentSessionId,
          time: String(timeNs),
          sequence: a["event.sequence"] ?? null,
          tool: a.tool_name,
          decision: a.decision,
          source: a.source ?? null,
        }),
        at: timeOf(timeNs, receivedAt),
        toolName: a.tool_name,
        decision,
        toolInput: toolInputOf(a),
        how: typeof a.source === "string" && a.source !== "" ? a.source : null,
      });
    }
  return items;
}
