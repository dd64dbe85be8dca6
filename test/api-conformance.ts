/**
 * Holds every response the tests receive to the API's own description: the
 * operation its method and path name, a status the operation documents, a
 * content type it documents for that status, and a body that validates
 * against that schema. Any mismatch throws, failing the test that made the call.
 */
import { Validator } from "@cfworker/json-schema";
import { exports } from "cloudflare:workers";

interface Doc {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, DocResponse> }>>;
  components: unknown;
}
interface DocResponse {
  content?: Record<string, { schema: unknown }>;
}

let loaded: Promise<{ doc: Doc; routes: { method: string; pattern: RegExp; literals: number; path: string }[] }> | undefined;

const documentLoaded = () =>
  (loaded ??= (async () => {
    const res = await exports.default.fetch(new Request("https://hub.test/api/v1/openapi.json"));
    if (res.status !== 200) throw new Error(`the API description did not load: ${res.status}`);
    const doc = (await res.json()) as Doc;
    const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({
        method,
        path,
        pattern: new RegExp(`^${path.replace(/\{\w+\}/g, "[^/]+")}/?$`),
        literals: path.split("/").filter((s) => s && !s.startsWith("{")).length,
      })),
    );
    return { doc, routes };
  })());

const validators = new Map<string, Validator>();

function validatorFor(doc: Doc, key: string, schema: unknown) {
  let v = validators.get(key);
  if (!v) {
    // The schema's $refs point into the document's components; they resolve against this root.
    v = new Validator({ components: structuredClone(doc.components), allOf: [structuredClone(schema)] } as object, "2020-12", false);
    validators.set(key, v);
  }
  return v;
}

const mediaType = (contentType: string | null) => (contentType ?? "").split(";")[0]!.trim().toLowerCase();
const isJson = (type: string) => type === "application/json" || type.endsWith("+json");

/** A fetch into the Worker whose every answer is held to the description (the typed client's and the helpers' transport). */
export async function conformingFetch(request: Request): Promise<Response> {
  const res = await exports.default.fetch(request);
  if (res.status === 101) return res;
  // Decoded here rather than by .text(), which warns about bodies that are not text (OTLP's protobuf answers).
  const text = new TextDecoder().decode(await res.clone().arrayBuffer());
  await assertConforms(request.method, request.url, res.status, res.headers.get("Content-Type"), text);
  return res;
}

/** Throws unless the response is what the description says this request gets. */
export async function assertConforms(method: string, url: string, status: number, contentType: string | null, text: string) {
  // A CORS preflight is the browser's question about any /api path, answered before the API: not an operation.
  if (method.toUpperCase() === "OPTIONS") return;
  const { doc, routes } = await documentLoaded();
  const path = new URL(url).pathname;
  const m = method.toLowerCase() === "head" ? "get" : method.toLowerCase();
  // Of the paths that match, the most literal one: /server/tasks/check before /server/tasks/{id}.
  const route = routes.filter((r) => r.method === m && r.pattern.test(path)).sort((a, b) => b.literals - a.literals)[0];
  const where = `${method} ${path} → ${status}`;
  let documented: DocResponse | undefined;
  let key: string;
  if (route) {
    const responses = doc.paths[route.path]![route.method]!.responses;
    const statusKey = [String(status), `${String(status)[0]}XX`, "default"].find((k) => responses[k]);
    if (!statusKey) throw new Error(`${where}: status ${status} is not documented for ${route.method.toUpperCase()} ${route.path}`);
    documented = responses[statusKey];
    key = `${route.method} ${route.path} ${statusKey}`;
  } else {
    // A path or method the hub does not have: only a problem (404, 405) may answer it.
    if (status < 400) throw new Error(`${where}: no operation in the description has this path and method`);
    documented = { content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } };
    key = "unknown route";
  }
  const type = mediaType(contentType);
  if (!documented!.content) {
    if (text !== "") throw new Error(`${where}: the description says no body, but one came (${type})`);
    return;
  }
  // The exact type, else a media range that covers it (`text/*`, `*/*`: bytes whose type their uploader chose).
  const documentedType = [type, `${type.split("/")[0]}/*`, "*/*"].find((t) => documented!.content![t]);
  if (!documentedType) throw new Error(`${where}: content type "${type}" is not documented (documented: ${Object.keys(documented!.content).join(", ")})`);
  const content = documented!.content[documentedType]!;
  if (!isJson(documentedType)) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${where}: the body is not JSON though ${type} says so`);
  }
  const result = validatorFor(doc, `${key} ${type}`, content.schema).validate(body);
  if (!result.valid) {
    const errors = result.errors
      .filter((e) => e.keyword !== "allOf" && e.keyword !== "$ref" && e.keyword !== "properties" && e.keyword !== "items")
      .slice(0, 5)
      .map((e) => `${e.instanceLocation}: ${e.error}`);
    throw new Error(`${where}: the body does not match the description:\n  ${errors.join("\n  ")}\n  body: ${text.slice(0, 500)}`);
  }
}
