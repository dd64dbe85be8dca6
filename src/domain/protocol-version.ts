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

/** The version both sides speak, or null. An agent that declares nothing speaks v1 (the protocols are opt-in). */
export function negotiateProtocol(declared: readonly string[] | undefined): string | null {
  if (!declared || declared.length === 0) return HUB_PROTOCOL_VERSIONS[0];
  return declared.some((v) => majorVersionOf(v) === 1) ? HUB_PROTOCOL_VERSIONS[0] : null;
}
