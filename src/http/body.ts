/** Reading and validating request input against zod schemas, with errors that name the field and the rule. */
import type { Context } from "hono";
import type { HubEnv } from "./context";
import type { z } from "zod";
import { zodFieldErrors } from "../protocol/field-errors";
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import { badRequest, fieldError, validationFailed } from "./problem";

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, prefix = ""): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationFailed(zodFieldErrors(parsed.error, prefix));
  return parsed.data;
}

/**
 * Parses the JSON body whatever its Content-Type says (agents in the wild send
 * JSON as text/plain), refuses one nested more than MAX_JSON_DEPTH deep (422
 * naming the top-level field), then validates it. An empty body counts as `{}`
 * so that endpoints whose fields are all optional accept a bare POST. A body
 * that may hold a DataRef pointer is kept for the write it makes (room/client.ts).
 */
export async function readJson<S extends z.ZodType>(c: Context<HubEnv>, schema: S): Promise<z.output<S>> {
  return parseWith(schema, await jsonBody(c, true));
}

/**
 * The JSON body, parsed; with `checkDepth` false the caller checks how deep each part of it nests (a list whose
 * items are taken or refused one by one).
 */
export async function jsonBody(c: Context<HubEnv>, checkDepth: boolean): Promise<unknown> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw badRequest(`The request body is not valid JSON: ${(e as Error).message}`, "MALFORMED_JSON");
    }
    const deep = checkDepth ? tooDeepUnder(value) : null;
    if (deep !== null) throw fieldError(deep, TOO_DEEP);
    // A key is spelt `$dataref` in the text, unless escapes spell it (`\u0024dataref`): only then is the body looked into.
    if (text.includes("$dataref") || text.includes("\\u")) c.set("pointingBody", value);
  }
  return value;
}

export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parseWith(schema, c.req.query(), "query");
}
