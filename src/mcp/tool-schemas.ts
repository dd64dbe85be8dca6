/**
 * A tool's schemas and how its arguments map onto its route, read from the API's description (JSON Schema that
 * zod-openapi made from the route's own zod schemas). Pure: the description in, the tool's shapes out.
 */
import type { ToolSpec } from "./catalogue";

type Schema = Record<string, unknown>;

interface DocOperation {
  description?: string;
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

export interface ApiDescription {
  paths: Record<string, Record<string, DocOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Where each argument of a tool goes in its request. */
export interface ToolRoute {
  pathParams: string[];
  queryParams: string[];
  /** `fields`: the body is the arguments other than parameters; `whole`: the body is the argument `body`; `none`: no body. */
  body: "fields" | "whole" | "none";
}

export interface ToolShape {
  route: ToolRoute;
  inputSchema: Schema & { type: "object" };
  outputSchema?: Schema & { type: "object" };
  /** The operation's own description, after the tool's sentence. */
  description: string;
}

const REF = "#/components/schemas/";
const DEFS = "#/$defs/";

/** `{$ref}` → the schema it names; an `anyOf` of shapes → its first object (the hub's own shape, not a dialect's). */
function objectShape(doc: ApiDescription, schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith(REF)) return objectShape(doc, doc.components?.schemas?.[ref.slice(REF.length)]);
  if (schema.type === "object") return schema;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  for (const v of variants ?? []) {
    const shape = objectShape(doc, v);
    if (shape) return shape;
  }
  return undefined;
}

/** The schema with its references pointing into `$defs`, which holds every component it reaches. */
function selfContained(doc: ApiDescription, schema: Schema): Schema {
  const text = JSON.stringify(schema);
  const defs: Record<string, Schema> = {};
  const pending = [...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  while (pending.length) {
    const name = pending.pop()!;
    if (defs[name]) continue;
    const component = doc.components?.schemas?.[name] ?? {};
    defs[name] = component;
    pending.push(...[...JSON.stringify(component).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!));
  }
  const rewritten = JSON.parse(text.replaceAll(`"${REF}`, `"${DEFS}`)) as Schema;
  if (Object.keys(defs).length === 0) return rewritten;
  return { ...rewritten, $defs: JSON.parse(JSON.stringify(defs).replaceAll(`"${REF}`, `"${DEFS}`)) };
}

/** An answer's schema as an MCP output schema (an object): an object, or a choice among objects; undefined for anything else. */
function outputShape(doc: ApiDescription, schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants?.every((v) => objectShape(doc, v))) return { type: "object", anyOf: variants };
  return objectShape(doc, schema);
}

const jsonSchemaOf = (content: Record<string, { schema?: Schema }> | undefined) => content?.["application/json"]?.schema;

/** The shapes of one tool, from its operation in the description; throws when the description has no such operation. */
export function toolShape(doc: ApiDescription, spec: ToolSpec): ToolShape {
  const op = doc.paths[spec.path]?.[spec.method];
  if (!op) throw new Error(`the API's description has no ${spec.method.toUpperCase()} ${spec.path} for the tool ${spec.name}`);
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const route: ToolRoute = { pathParams: [], queryParams: [], body: "none" };
  for (const p of op.parameters ?? []) {
    if (p.in !== "path" && p.in !== "query") continue;
    if (p.in === "query" && spec.omitQuery?.includes(p.name)) continue;
    properties[p.name] = { ...p.schema, ...(p.description ? { description: p.description } : {}) };
    if (p.required) required.push(p.name);
    (p.in === "path" ? route.pathParams : route.queryParams).push(p.name);
  }
  const bodySchema = jsonSchemaOf(op.requestBody?.content);
  const bodyObject = objectShape(doc, bodySchema);
  if (bodyObject) {
    route.body = "fields";
    for (const [name, schema] of Object.entries((bodyObject.properties ?? {}) as Record<string, Schema>)) properties[name] ??= schema;
    if (op.requestBody?.required) required.push(...((bodyObject.required as string[] | undefined) ?? []));
  } else if (bodySchema) {
    route.body = "whole";
    properties.body = bodySchema;
    if (op.requestBody?.required) required.push("body");
  }
  const inputSchema = selfContained(doc, {
    type: "object",
    properties,
    ...(required.length ? { required: [...new Set(required)] } : {}),
  }) as ToolShape["inputSchema"];
  const answerSchema = jsonSchemaOf(op.responses?.["200"]?.content ?? op.responses?.["201"]?.content);
  const answer = spec.ownShape ? objectShape(doc, answerSchema) : outputShape(doc, answerSchema);
  const outputSchema = answer ? (selfContained(doc, answer) as ToolShape["outputSchema"]) : undefined;
  return { route, inputSchema, ...(outputSchema ? { outputSchema } : {}), description: op.description ?? "" };
}
