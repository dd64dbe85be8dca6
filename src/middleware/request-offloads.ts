/**
 * What a request offloaded to R2 (see datarefs/offload.ts), remembered on its context
 * so that a request refused afterwards leaves no DataRef behind.
 */
import { createMiddleware } from "hono/factory";
import { offloadLargeJson, removeStored } from "../datarefs/offload";
import type { HubContext, HubEnv } from "../http/context";
import { logFailure } from "../http/failure-log";

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
  try {
    await removeStored(c.env, c.var.db, stored);
  } catch (e) {
    logFailure(c, "could not remove the DataRefs of a refused request", e);
  }
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
