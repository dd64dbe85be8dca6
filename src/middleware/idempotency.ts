/**
 * `Idempotency-Key` on POSTs (API.md): the same key and body from the same
 * caller replays the first response; the same key with another body is 422;
 * a request still being handled under that key is 409. Keys live 24 hours.
 *
 * The key is claimed with one atomic upsert, so of any number of concurrent
 * requests exactly one runs the handler. A claim is a lease: a request cut off
 * between its claim and its answer (a crash, an evicted isolate) would
 * otherwise strand the key for a day, so once the lease has passed with no
 * answer recorded, a retry takes the key over. The claim's time identifies it:
 * a request that outlived its lease records nothing over its successor's.
 *
 * A replay is an answer the handler gave, so it is given only to a caller
 * who would be granted the same project access again: the checks the first
 * request passed (auth/access.ts) are kept with its answer and made again.
 * An answer holding a secret a replay must hand out again (a webhook's
 * signing secret) is stored sealed under DATA_KEY, never in clear.
 *
 * Two callers use it: the middleware on authenticated routes (the caller is
 * the principal), and registration (the caller is its registration token,
 * and the answer, which holds the new API key, is stored sealed).
 */
import { createMiddleware } from "hono/factory";
import { recheckAccess } from "../auth/access";
import { callerKey } from "../auth/principal";
import { sha256Hex } from "../auth/secrets";
import { seal, unseal } from "../auth/sealed";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, fieldError, Problem } from "../http/problem";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Longer than any request runs (the Worker's work is a few D1 round trips and one room operation). */
export const IDEMPOTENCY_LEASE_MS = 30_000;
export const requestFingerprint = (method: string, path: string, body: string) => sha256Hex(`${method} ${path}\n${body}`);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The request's Idempotency-Key on a POST, checked; undefined when there is none. */
export function idempotencyKeyOf(c: HubContext): string | undefined {
  const key = c.req.header("Idempotency-Key");
  if (c.req.method !== "POST" || key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) throw fieldError("header.Idempotency-Key", "must be 1 to 255 visible ASCII characters");
  return key;
}

export interface IdempotencyScope {
  /** Whose keys these are: a caller's keys never meet another's. */
  caller: string;
  key: string;
  /** Store the answer sealed under DATA_KEY (it holds a secret the replay must hand out again), whatever the handler says. */
  sealed?: boolean;
}

/**
 * Runs `handle` at most once per caller, key and body: replays its answer to
 * the same request again, refuses another body (422) or a request while the
 * first is still being handled (409). `handle` answers the response to keep;
 * a 5xx, or a throw, releases the key so a retry runs again.
 */
export async function runIdempotently(c: HubContext, scope: IdempotencyScope, handle: () => Promise<Response>): Promise<Response> {
  const { caller, key } = scope;
  const requestHash = await requestFingerprint(c.req.method, c.req.path, await c.req.text());
  const now = Date.now();
  const claimedAt = new Date(now).toISOString();
  // Taken over when expired, or when its request never answered within the lease (same body only: another body is 422).
  const claim = await c.env.DB.prepare(
    `INSERT INTO idempotency_keys (caller, key, request_hash, created_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (caller, key) DO UPDATE SET request_hash = excluded.request_hash, response_status = NULL,
       response_body = NULL, response_content_type = NULL, sealed = 0, scope = NULL, created_at = excluded.created_at
     WHERE idempotency_keys.created_at < ?5
        OR (idempotency_keys.response_status IS NULL AND idempotency_keys.request_hash = ?3 AND idempotency_keys.created_at < ?6)`,
  )
    .bind(caller, key, requestHash, claimedAt, new Date(now - IDEMPOTENCY_TTL_MS).toISOString(), new Date(now - IDEMPOTENCY_LEASE_MS).toISOString())
    .run();

  if (claim.meta.changes === 0) {
    const prior = await c.env.DB.prepare(
      "SELECT request_hash, response_status, response_body, response_content_type, sealed, scope FROM idempotency_keys WHERE caller = ?1 AND key = ?2",
    )
      .bind(caller, key)
      .first<{
        request_hash: string;
        response_status: number | null;
        response_body: string | null;
        response_content_type: string;
        sealed: number;
        scope: string | null;
      }>();
    if (!prior) return handle(); // expired and swept between the two statements
    if (prior.request_hash !== requestHash) {
      throw new Problem(422, "IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request body");
    }
    if (prior.response_status === null) {
      throw conflict(
        `A request with this Idempotency-Key is still being handled; retry shortly (one that was cut off is taken over ${IDEMPOTENCY_LEASE_MS / 1000} s after it began)`,
        "IDEMPOTENCY_KEY_IN_FLIGHT",
      );
    }
    // The caller must still be granted what the first request was: removed from the project, they get its 404.
    if (prior.scope) await recheckAccess(c, JSON.parse(prior.scope));
    if (prior.response_body === null) {
      throw conflict("The request with this Idempotency-Key succeeded, but its answer held a secret that is shown only once", "IDEMPOTENT_SECRET_NOT_REPLAYED");
    }
    const body = prior.sealed ? await unseal(c.env.DATA_KEY, prior.response_body) : prior.response_body;
    return new Response(body, {
      status: prior.response_status,
      headers: { "Content-Type": prior.response_content_type, "Idempotent-Replayed": "true" },
    });
  }

  const release = () => c.env.DB.prepare("DELETE FROM idempotency_keys WHERE caller = ?1 AND key = ?2 AND created_at = ?3").bind(caller, key, claimedAt).run();
  let res: Response;
  try {
    res = await handle();
  } catch (e) {
    await release();
    throw e;
  }
  if (res.status >= 500) {
    // Nothing was done that must not be done twice: let the client retry with the same key.
    await release();
    return res;
  }
  // A secret is kept only sealed: shown once when the handler says so, or when there is no DATA_KEY to seal it with.
  const secret = scope.sealed ? "sealed" : c.var.secretResponse;
  const sealed = secret === "sealed" && Boolean(c.env.DATA_KEY);
  const text = secret && !sealed ? null : await res.clone().text();
  const checks = c.var.accessChecks ?? [];
  await c.env.DB.prepare(
    `UPDATE idempotency_keys SET response_status = ?4, response_body = ?5, response_content_type = ?6, sealed = ?7, scope = ?8
     WHERE caller = ?1 AND key = ?2 AND created_at = ?3`,
  )
    .bind(
      caller,
      key,
      claimedAt,
      res.status,
      text !== null && sealed ? await seal(c.env.DATA_KEY, text) : text,
      res.headers.get("Content-Type") ?? "application/json",
      sealed ? 1 : 0,
      checks.length > 0 ? JSON.stringify(checks) : null,
    )
    .run();
  return res;
}

/** The middleware of authenticated routes: keys are the principal's. */
export const idempotent = createMiddleware<HubEnv>(async (c, next) => {
  const principal = c.var.principal;
  if (c.req.method !== "POST" || c.req.header("Idempotency-Key") === undefined || !principal) return next();
  let handled = false;
  const res = await runIdempotently(c, { caller: callerKey(principal), key: idempotencyKeyOf(c)! }, async () => {
    handled = true;
    await next();
    return c.res;
  });
  // A replay: the handler never ran, and this is the answer.
  if (!handled) return res;
});
