/** zod building blocks shared by the hub's own request bodies. */
import { z } from "zod";
import { ROLES } from "../db/schema";
import { AGENT_TYPE_ALIASES, AGENT_TYPES, daemonAgentType } from "../domain/agent-types";
import { parseSeq } from "../domain/seq";
import { pointersIn } from "../datarefs/pointers";

export const email = z
  .email("must be an email address")
  .max(254)
  .transform((e) => e.toLowerCase());
export const password = z.string().min(8, "must be at least 8 characters").max(256, "must be at most 256 characters");
export const role = z.enum(ROLES);
export const uuid = z.uuid("must be a UUID");
/** Whether a path parameter can name a row at all (anything else is simply not found). */
export const isUuid = (value: string) => uuid.safeParse(value).success;
/** A short human label: trimmed, non-empty. */
export const label = (max = 200) => z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
/** A TCP port on a machine. */
export const tcpPort = z.int("must be a whole number").min(1, "must be a port from 1 to 65535").max(65535, "must be a port from 1 to 65535");
export const text = (max = 10_000) => z.string().max(max, `must be at most ${max} characters`);

/** The coding agent a session runs, by the daemon's name (the short names are mapped to it). */
export const agentType = z
  .enum([...AGENT_TYPES, ...(Object.keys(AGENT_TYPE_ALIASES) as (keyof typeof AGENT_TYPE_ALIASES)[])], {
    error: `must be one of ${AGENT_TYPES.join(", ")} (${Object.entries(AGENT_TYPE_ALIASES)
      .map(([short, name]) => `${short} for ${name}`)
      .join(", ")})`,
  })
  .transform(daemonAgentType)
  .meta({
    description:
      `The daemon's name for the agent: ${AGENT_TYPES.join(", ")}; ${Object.keys(AGENT_TYPE_ALIASES).join(", ")} are taken for ` +
      `${Object.values(AGENT_TYPE_ALIASES).join(", ")}. Left out, the daemon detects it from the working directory.`,
  });

/** Largest JSON object stored inline in a D1 row (D1 rows hold at most 2 MB). */
export const INLINE_JSON_BYTES = 512 * 1024;

/** Refines a JSON-valued field so that it stays storable: at most `max` bytes once serialised. */
export const withinJsonLimit = <T extends z.ZodType>(schema: T, max = INLINE_JSON_BYTES) =>
  schema.superRefine((value, ctx) => {
    if (value !== undefined && new TextEncoder().encode(JSON.stringify(value) ?? "").byteLength > max) {
      ctx.addIssue({ code: "custom", message: `must be at most ${max} bytes of JSON` });
    }
  });

/**
 * A JSON field a server declares about itself (system_info, capabilities, repos): at most 64 KiB, and no DataRef
 * pointer, which is only ever read in its own project (datarefs/pointers.ts) while a server belongs to none.
 */
export const serverJson = <T extends z.ZodType>(schema: T) =>
  withinJsonLimit(schema, 64 * 1024).superRefine((value, ctx) => {
    for (const { path } of pointersIn(value)) {
      ctx.addIssue({
        code: "custom",
        path,
        message: "must not hold a DataRef pointer: a server belongs to no project, and its fields are seen across projects",
      });
    }
  });

/** A position in a project's event log, from a query string. */
export const seqQuery = z.string().transform((text, ctx) => {
  const seq = parseSeq(text);
  if (seq === null) ctx.addIssue({ code: "custom", message: "must be a non-negative integer" });
  return seq ?? z.NEVER;
});

/** How the API's description shows a field that also takes null: either its own schema or null. */
const orNull = ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
  const own = { ...jsonSchema };
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  jsonSchema.anyOf = [own, { type: "null" }];
};

/** `null` for this field is taken as the field left out. */
export const absentWhenNull = <T extends z.core.$ZodType>(field: T) => z.preprocess((v) => (v === null ? undefined : v), field).meta({ override: orNull });

/**
 * JSON clients send `null` for what they do not set: in a request, `null` in
 * an optional field means the field is absent (its default, if it has one).
 * Applies that to every field of `shape` that may be left out and does not
 * already give null a meaning of its own (a nullable field keeps it). What
 * the fields parse to is unchanged.
 */
export function nullMeansAbsent<S extends z.ZodRawShape>(shape: S): S {
  const optional = (field: z.core.$ZodType) => z.safeParse(field, undefined).success && !z.safeParse(field, null).success;
  return Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, optional(field) ? absentWhenNull(field) : field])) as S;
}

/** The object schema with `nullMeansAbsent` applied to its fields (its other rules, a loose object's included, kept). */
export const withNullsAbsent = <T extends z.ZodObject>(schema: T): T => schema.extend(nullMeansAbsent(schema.shape)) as T;
