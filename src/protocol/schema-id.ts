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
