/**
 * The conformance kit's JSON Schema of A2A 1.0 (test/fixtures/a2a-tck-schema.json, the kit's specification/a2a.json,
 * generated from a2a.proto), with its references resolved the way the kit's validator resolves them: each
 * `lf.a2a.v1.<Name>.jsonschema.json` is the definition titled <Name> with spaces, inlined, and a type met again inside
 * itself stands as any object.
 */
import { Validator, type Schema } from "@cfworker/json-schema";
import bundle from "./fixtures/a2a-tck-schema.json";

const definitions = bundle.definitions as Record<string, Schema>;
const byRef = new Map<string, string>();
for (const name of Object.keys(definitions)) {
  const compact = name.replaceAll(" ", "");
  byRef.set(`lf.a2a.v1.${compact}.jsonschema.json`, name);
  byRef.set(`google.protobuf.${compact}.jsonschema.json`, name);
}

function resolved(node: unknown, seen: ReadonlySet<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => resolved(n, seen));
  if (typeof node !== "object" || node === null) return node;
  const { $ref, ...rest } = node as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, resolved(v, seen)]));
  const name = typeof $ref === "string" ? byRef.get($ref) : undefined;
  if (!name) return $ref === undefined ? out : { ...out, $ref };
  const target = seen.has(name) ? { type: "object" } : (resolved(definitions[name], new Set([...seen, name])) as Record<string, unknown>);
  return { ...target, ...out };
}

const validators = new Map<string, Validator>();

/** Where a JSON value breaks the kit's schema of the definition so titled ("Agent Card", "Send Message Response", ...): empty when it conforms. */
export function schemaErrors(definition: string, value: unknown): string[] {
  let validator = validators.get(definition);
  if (!validator) {
    if (!definitions[definition]) throw new Error(`the kit's schema has no definition ${definition}`);
    validator = new Validator(resolved(definitions[definition], new Set([definition])) as Schema, "2020-12", false);
    validators.set(definition, validator);
  }
  return validator.validate(value).errors.map((e) => `${e.instanceLocation}: ${e.error}`);
}
