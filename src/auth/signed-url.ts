/**
 * Short-lived signed URLs for DataRef bytes: a jose-signed token bound to one
 * object, one method and (for uploads) the declared size. Anyone holding the
 * URL may use it until it expires — that is the point (least privilege for
 * agents that need no other credential) — so it lives minutes, not hours.
 */
import { errors, jwtVerify, SignJWT } from "jose";
import type { Env } from "../runtime/env";

export const UPLOAD_URL_TTL_SECONDS = 15 * 60;
export const DOWNLOAD_URL_TTL_SECONDS = 10 * 60;
const AUDIENCE = "orchestratia-dataref";

export type BlobMethod = "PUT" | "GET";

export interface BlobGrant {
  datarefId: string;
  method: BlobMethod;
  size: number;
}

/** A project's history export (src/archive/exports.ts): its own audience, so a DataRef's URL never opens one, nor the reverse. */
const EXPORT_AUDIENCE = "orchestratia-export";

const key = (env: Env) => new TextEncoder().encode(env.JWT_SECRET);

async function sign(env: Env, audience: string, grant: BlobGrant) {
  const ttl = grant.method === "PUT" ? UPLOAD_URL_TTL_SECONDS : DOWNLOAD_URL_TTL_SECONDS;
  const exp = Math.floor(Date.now() / 1000) + ttl;
  const token = await new SignJWT({ m: grant.method, s: grant.size })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(grant.datarefId)
    .setAudience(audience)
    .setIssuer(env.JWT_ISSUER)
    .setExpirationTime(exp)
    .sign(key(env));
  return { token, expires_at: new Date(exp * 1000).toISOString() };
}

export async function signBlobUrl(env: Env, base: string, grant: BlobGrant): Promise<{ url: string; expires_at: string }> {
  const { token, expires_at } = await sign(env, AUDIENCE, grant);
  return { url: `${base}/api/v1/blobs/${grant.datarefId}?token=${token}`, expires_at };
}

/** A download URL of one export's file. */
export async function signExportUrl(env: Env, base: string, exportId: string, size: number): Promise<{ url: string; expires_at: string }> {
  const { token, expires_at } = await sign(env, EXPORT_AUDIENCE, { datarefId: exportId, method: "GET", size });
  return { url: `${base}/api/v1/exports/${exportId}?token=${token}`, expires_at };
}

export class BlobUrlRefused extends Error {
  constructor(
    message: string,
    readonly status: 401 | 403,
  ) {
    super(message);
  }
}

/** Checks a blob URL's token for this object and method; throws BlobUrlRefused saying why not. */
export const verifyBlobUrl = (env: Env, token: string | undefined, datarefId: string, method: BlobMethod) => verify(env, AUDIENCE, token, datarefId, method);

/** Checks an export URL's token for this export; throws BlobUrlRefused saying why not. */
export const verifyExportUrl = (env: Env, token: string | undefined, exportId: string) => verify(env, EXPORT_AUDIENCE, token, exportId, "GET");

async function verify(env: Env, audience: string, token: string | undefined, datarefId: string, method: BlobMethod): Promise<BlobGrant> {
  if (!token) throw new BlobUrlRefused("The URL carries no token", 401);
  let payload;
  try {
    ({ payload } = await jwtVerify(token, key(env), { algorithms: ["HS256"], audience, issuer: env.JWT_ISSUER }));
  } catch (e) {
    throw new BlobUrlRefused(e instanceof errors.JWTExpired ? "The URL has expired; ask for a fresh one" : "The URL's signature is not valid", 401);
  }
  if (payload.sub !== datarefId) throw new BlobUrlRefused("This URL is for another object", 403);
  if (payload.m !== method) throw new BlobUrlRefused(`This URL is for ${String(payload.m)}, not ${method}`, 403);
  return { datarefId, method, size: Number(payload.s) };
}
