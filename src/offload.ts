/**
 * Automatic offload (API.md "DataRefs"): JSON larger than the inline limit in
 * results, contract data, specs and plans goes to R2 as a DataRef, and D1
 * holds `{"$dataref": id, size, sha256, content_type}` instead. On the way
 * out, every such reference gets a fresh short-lived download URL, so the
 * agent that receives it needs no other credential.
 */
import { createMiddleware } from "hono/factory";
import { inArray } from "drizzle-orm";
import { signBlobUrl } from "./auth/signed-url";
import { sha256Hex } from "./auth/secrets";
import { blobKey } from "./blobs";
import type { Db } from "./db/client";
import { isForeignKeyViolation } from "./db/errors";
import { datarefs } from "./db/schema";
import type { Env } from "./env";
import type { HubContext, HubEnv } from "./http/context";
import { notFound } from "./http/problem";

export const DEFAULT_INLINE_JSON_BYTES = 64 * 1024;

export interface DatarefPointer {
  $dataref: string;
  size: number;
  sha256: string;
  content_type: string;
  url?: string;
  expires_at?: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

export const inlineLimit = (env: Env) => Number(env.INLINE_JSON_BYTES) || DEFAULT_INLINE_JSON_BYTES;

export interface OffloadContext {
  env: Env;
  db: Db;
  projectId: string;
  createdBy: string;
  /** Hears of each DataRef stored, so that a request refused afterwards can remove what it stored. */
  stored?: (id: string) => void;
}

async function store(ctx: OffloadContext, value: unknown): Promise<DatarefPointer> {
  const text = JSON.stringify(value);
  const id = crypto.randomUUID();
  const sha256 = await sha256Hex(text);
  const size = byteLength(text);
  await ctx.env.BLOBS.put(blobKey(ctx.projectId, id), text, { httpMetadata: { contentType: "application/json" }, sha256 });
  const now = new Date().toISOString();
  const recorded = ctx.db.insert(datarefs).values({
    id,
    projectId: ctx.projectId,
    status: "complete",
    contentType: "application/json",
    size,
    sha256,
    filename: null,
    createdBy: ctx.createdBy,
    createdAt: now,
    uploadExpiresAt: now,
    completedAt: now,
  });
  await recorded.catch(async (e: unknown) => {
    await ctx.env.BLOBS.delete(blobKey(ctx.projectId, id));
    // The project was deleted while the request was on its way (a Worker may remember a task's project).
    if (isForeignKeyViolation(e)) throw notFound("Project");
    throw e;
  });
  ctx.stored?.(id);
  return { $dataref: id, size, sha256, content_type: "application/json" };
}

/** How far into a value offloading looks before moving a part as a whole. */
export const OFFLOAD_DEPTH = {
  /** result → contracts → entry → data: a contract's data moves as one DataRef. */
  result: 3,
  /** structured_spec → a top-level member (requirements, input_context, ...). */
  spec: 1,
  /** plans and intervention contexts move whole. */
  whole: 0,
} as const;

/**
 * Returns `value` with every part too large to keep inline moved to R2. Down
 * to `depth` levels it moves the largest members first, so small fields (a
 * result's summary) stay readable in place; below that, or when still too
 * large, a part moves as a whole.
 */
export async function offloadLargeJson(ctx: OffloadContext, value: unknown, depth: number, limit = inlineLimit(ctx.env)): Promise<unknown> {
  if (value === undefined || byteLength(JSON.stringify(value)) <= limit) return value;
  if (depth > 0 && isPlainObject(value) && !("$dataref" in value)) {
    const out: Record<string, unknown> = { ...value };
    const bySize = Object.keys(out).sort((a, b) => byteLength(JSON.stringify(out[b]) ?? "") - byteLength(JSON.stringify(out[a]) ?? ""));
    for (const key of bySize) {
      if (byteLength(JSON.stringify(out)) <= limit) break;
      out[key] = await offloadLargeJson(ctx, out[key], depth - 1, limit);
    }
    if (byteLength(JSON.stringify(out)) <= limit) return out;
  }
  return store(ctx, value);
}

/** A copy of `value` in which every DataRef pointer carries a fresh download URL. */
export async function withDownloadUrls(env: Env, base: string, value: unknown): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => withDownloadUrls(env, base, v)));
  if (!isPlainObject(value)) return value;
  if (typeof value.$dataref === "string") {
    const link = await signBlobUrl(env, base, { datarefId: value.$dataref, method: "GET", size: Number(value.size) });
    return { ...value, url: link.url, expires_at: link.expires_at };
  }
  const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await withDownloadUrls(env, base, v)] as const));
  return Object.fromEntries(entries);
}

/** Offloads for this request and project, remembering what was stored (see `discardOffloaded`). */
export const offloaderFor = (c: HubContext, projectId: string, createdBy: string) => (value: unknown, depth: number) =>
  offloadLargeJson({ env: c.env, db: c.var.db, projectId, createdBy, stored: (id) => c.set("offloaded", [...(c.var.offloaded ?? []), { projectId, id }]) }, value, depth);

/**
 * Removes the DataRefs this request stored, but those in `keep`: its
 * operation was refused, or changed nothing. Best effort: a leftover costs
 * storage, never correctness, so a failure here does not fail the request.
 */
export async function discardOffloaded(c: HubContext, keep: ReadonlySet<string> = new Set()) {
  const stored = (c.var.offloaded ?? []).filter((s) => !keep.has(s.id));
  c.set("offloaded", []);
  if (stored.length === 0) return;
  try {
    await c.var.db.delete(datarefs).where(inArray(datarefs.id, stored.map((s) => s.id)));
    await c.env.BLOBS.delete(stored.map((s) => blobKey(s.projectId, s.id)));
  } catch (e) {
    console.error("could not remove the DataRefs of a refused request", e);
  }
}

/** The DataRef ids a value points to. */
export function pointedTo(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => pointedTo(v, into));
  else if (isPlainObject(value)) {
    if (typeof value.$dataref === "string") into.add(value.$dataref);
    else Object.values(value).forEach((v) => pointedTo(v, into));
  }
  return into;
}

/**
 * A request that fails after offloading leaves no DataRef behind — unless
 * its room operation may have committed (the room answered, or never did),
 * in which case what it stored may be referenced.
 */
export const discardOffloadsOnError = createMiddleware<HubEnv>(async (c, next) => {
  await next();
  const outcome = c.var.roomOutcome;
  if (c.res.status >= 400 && (outcome === undefined || outcome === "refused")) await discardOffloaded(c);
});
