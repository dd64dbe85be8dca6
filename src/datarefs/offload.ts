/**
 * Automatic offload (API.md "DataRefs"): JSON larger than the inline limit in
 * results, contract data, specs and plans goes to R2 as a DataRef, and D1
 * holds `{"$dataref": id, size, sha256, content_type}` instead. On the way
 * out, every such reference gets a fresh short-lived download URL
 * (pointers.ts), so the agent that receives it needs no other credential.
 *
 * This is the part the Worker and the project room share; what a request
 * offloaded, and its removal when the request is refused, is in
 * `middleware/request-offloads.ts`.
 */
import { inArray } from "drizzle-orm";
import { sha256Hex } from "../auth/secrets";
import { blobKey, completeDatarefRow } from "./blobs";
import type { Db } from "../db/client";
import { isForeignKeyViolation } from "../db/errors";
import { datarefs } from "../db/schema";
import { NotFound } from "../domain/errors";
import type { Env } from "../runtime/env";
import { isPlainObject } from "../domain/plain-object";

export const DEFAULT_INLINE_JSON_BYTES = 64 * 1024;

export interface DatarefPointer {
  $dataref: string;
  size: number;
  sha256: string;
  content_type: string;
  url?: string;
  expires_at?: string;
}

const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

export const inlineLimit = (env: Env) => Number(env.INLINE_JSON_BYTES) || DEFAULT_INLINE_JSON_BYTES;

/** A DataRef that offloading stored. */
export interface StoredDataref {
  projectId: string;
  id: string;
}

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
  const recorded = ctx.db
    .insert(datarefs)
    .values(completeDatarefRow({ id, projectId: ctx.projectId, contentType: "application/json", size, sha256, filename: null, createdBy: ctx.createdBy }));
  await recorded.catch(async (e: unknown) => {
    await ctx.env.BLOBS.delete(blobKey(ctx.projectId, id));
    // The project was deleted while the request was on its way (a Worker may remember a task's project).
    if (isForeignKeyViolation(e)) throw new NotFound("Project");
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
  /** a Task Response's artifacts and metadata: each moves as one DataRef. */
  response: 1,
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

/** Removes DataRefs that offloading stored: their rows, then their bytes. */
export async function removeStored(env: Env, db: Db, stored: readonly StoredDataref[]) {
  if (stored.length === 0) return;
  await db.delete(datarefs).where(
    inArray(
      datarefs.id,
      stored.map((s) => s.id),
    ),
  );
  await env.BLOBS.delete(stored.map((s) => blobKey(s.projectId, s.id)));
}
