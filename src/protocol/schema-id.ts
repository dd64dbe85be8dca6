/**
 * `$schema` identifiers of the Orchestratia protocols (seed §7): the hub
 * validates by prefix; a known prefix with an unknown version is accepted and
 * reported as a warning rather than refused.
 */
export type SchemaFamily = "task-spec" | "task-result" | "capabilities" | "requirements";

export const currentSchemaId = (family: SchemaFamily) => `orchestratia/${family}/v1`;

export type SchemaCheck = { kind: "current" } | { kind: "absent" } | { kind: "other-version"; warning: string } | { kind: "foreign"; warning: string };

export function checkSchemaId(family: SchemaFamily, value: unknown): SchemaCheck {
  if (value === undefined || value === null) return { kind: "absent" };
  const id = String(value);
  if (id === currentSchemaId(family)) return { kind: "current" };
  if (id.startsWith(`orchestratia/${family}/`)) {
    return { kind: "other-version", warning: `${family}: unknown schema version "${id}" accepted as ${currentSchemaId(family)}` };
  }
  return { kind: "foreign", warning: `${family}: unrecognised $schema "${id}"` };
}

/**
 * Warnings about a capabilities object's `$schema` (seed §7: validated by
 * prefix, unknown versions accepted with a warning). A foreign identifier is
 * accepted with a warning too: capabilities are informational (a node
 * descriptor in compute-protocol.md), and every field is still checked.
 */
export function capabilitiesWarnings(capabilities: { $schema?: unknown } | null | undefined): string[] {
  const id = checkSchemaId("capabilities", capabilities?.$schema);
  return id.kind === "other-version" || id.kind === "foreign" ? [id.warning] : [];
}

/** A response's `warnings`, only when there are some (responses the official clients get stay as they were). */
export const withWarnings = (warnings: string[]) => (warnings.length ? { warnings } : {});
