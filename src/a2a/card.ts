/**
 * A project's agent card: the project as one A2A agent, one skill per capability its live servers offer, its JSON-RPC
 * interface (A2A 1.0, and 0.3 through the SDK's compatibility layer), and the REST API's credentials. Pure.
 */
import { AgentCard } from "@a2a-js/sdk";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";
import type { Candidate } from "../domain/matching";
import { capabilityNames } from "../domain/matching";
import { HUB_VERSION } from "../runtime/version";

export const BEARER_SCHEME = "bearer";
/** The media types a message may carry (and a task's artifacts hold): a part of another is refused (spec 3.1.1). */
export const INPUT_MODES = ["text/plain", "application/json"];

/** Each capability an online server of the project offers, with how many offer it, in name order. */
export function offeredCapabilities(candidates: readonly Candidate[]): { name: string; servers: number }[] {
  const counts = new Map<string, number>();
  for (const c of candidates) if (c.online && c.capabilities) for (const name of capabilityNames(c.capabilities)) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([name, servers]) => ({ name, servers }));
}

export function agentCardOf(project: { name: string; description?: string | null }, endpoint: string, candidates: readonly Candidate[]): AgentCard {
  return {
    name: project.name,
    description:
      (project.description ? `${project.description}\n\n` : "") +
      "A project of an Orchestratia hub: each message becomes a task that the hub routes to the best of the project's agents by capability. " +
      "Questions come back as input required (answer with a message naming the task), results as artifacts, one per contract.",
    supportedInterfaces: duplicateInterfacesForLegacy([{ url: endpoint, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }], ["JSONRPC"]),
    provider: { organization: "Orchestratia", url: new URL(endpoint).origin },
    version: HUB_VERSION,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      [BEARER_SCHEME]: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { scheme: "Bearer", bearerFormat: "JWT", description: "A person's access token, or an agent's API key (orc_...), as for the hub's REST API" },
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER_SCHEME]: { list: [] } } }],
    defaultInputModes: INPUT_MODES,
    defaultOutputModes: INPUT_MODES,
    skills: offeredCapabilities(candidates).map(({ name, servers }) => ({
      id: name,
      name,
      description: `Work needing ${name}, offered by ${servers} live ${servers === 1 ? "agent" : "agents"} of the project. Ask for it with the message's metadata {"skills": ["${name}"]}.`,
      tags: [name],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

/**
 * The card for an A2A 0.3 client (one sending no `A2A-Version`, or 0.3): the 0.3 fields beside 1.0's
 * supportedInterfaces, the hybrid the SDK's compatibility layer reads either way.
 */
export function legacyCardOf(card: AgentCard): Record<string, unknown> {
  const modern = AgentCard.toJSON(card) as Record<string, unknown>;
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion === "0.3")!;
  return {
    ...modern,
    protocolVersion: "0.3.0",
    url: legacy.url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url: legacy.url, transport: "JSONRPC" }],
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    securitySchemes: {
      [BEARER_SCHEME]: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "A person's access token, or an agent's API key (orc_...)" },
    },
    security: [{ [BEARER_SCHEME]: [] }],
    skills: card.skills.map(({ id, name, description, tags, examples }) => ({ id, name, description, tags, examples })),
    supportsAuthenticatedExtendedCard: false,
  };
}
