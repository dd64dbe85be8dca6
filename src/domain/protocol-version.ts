/**
 * Protocol negotiation (seeds/compute-protocol.md: peers declare the versions
 * they speak, and an incompatible one is refused explicitly, never silently
 * downgraded). The hub speaks major version 1 of the Orchestratia protocols.
 */
export const HUB_PROTOCOL_VERSIONS = ["orchestratia/v1"] as const;

/** "orchestratia/v1", "v1", "1", "1.2.0" and "orchestratia/task-spec/v1" all name major version 1. */
export function majorVersionOf(declared: string): number | null {
  const match = declared.trim().match(/(?:^|\/)v?(\d+)(?:\.\d+){0,2}$/i);
  return match ? Number(match[1]) : null;
}

/**
 * The version both sides speak, or null. An agent that declares nothing speaks v1: the core protocol's features are
 * opt-in and agents from before them "continue to work exactly as before" (core §7). An empty list declares that it
 * speaks nothing, which is no version the hub speaks.
 */
export function negotiateProtocol(declared: readonly string[] | undefined): string | null {
  if (declared === undefined) return HUB_PROTOCOL_VERSIONS[0];
  return declared.some((v) => majorVersionOf(v) === 1) ? HUB_PROTOCOL_VERSIONS[0] : null;
}

/** Why a declaration is refused, as a field error's message; null when the hub speaks one of its versions. */
export function protocolRefusal(declared: readonly string[] | undefined): string | null {
  if (negotiateProtocol(declared) !== null) return null;
  const spoken = HUB_PROTOCOL_VERSIONS.join(", ");
  return declared?.length === 0
    ? `must not be empty: name the versions the agent speaks (the hub speaks ${spoken}), or leave the field out to speak ${spoken}`
    : `must include one of ${spoken}`;
}

/** What an agent that declared no versions is told: it is taken as v1, and how to say so itself. */
export const UNDECLARED_PROTOCOL_WARNING =
  `protocol_versions not declared: taken as ${HUB_PROTOCOL_VERSIONS[0]} (the protocols are opt-in, core §7); ` +
  `declare ["${HUB_PROTOCOL_VERSIONS[0]}"] to say so, and to be refused rather than misread should the hub stop speaking it`;
