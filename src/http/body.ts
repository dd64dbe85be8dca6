/** Reading and validating request input against zod schemas, with errors that name the field and the rule. */
import type { Context } from "hono";
import type { z } from "zod";
import { zodFieldErrors } from "../protocol/field-errors";
import { badRequest, validationFailed } from "./problem";

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, prefix = ""): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationFailed(zodFieldErrors(parsed.error, prefix));
  return parsed.data;
}

/**
 * Parses the JSON body whatever its Content-Type says (agents in the wild send
 * JSON as text/plain), then validates it. An empty body counts as `{}` so that
 * endpoints whose fields are all optional accept a bare POST.
 */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw badRequest(`The request body is not valid JSON: ${(e as Error).message}`, "MALFORMED_JSON");
    }
  }
  return parseWith(schema, value);
}

export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parseWith(schema, c.req.query(), "query");
}
