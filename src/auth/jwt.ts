/**
 * People's access tokens: HS256 JWTs signed by the hub, 15 minutes long, with
 * algorithm, issuer and audience pinned on verification. When JWT_JWKS_URL is
 * set, tokens from that identity provider (e.g. Cloudflare Access) are
 * accepted too and name their user by email.
 */
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, SignJWT } from "jose";
import type { Env } from "../runtime/env";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export type TokenIdentity = { userId: string } | { email: string };

export class InvalidToken extends Error {}

const key = (env: Env) => new TextEncoder().encode(env.JWT_SECRET);

/** A person's access token; it expires after the usual lifetime, or at `expiresAt` (seconds since the epoch). */
export async function issueAccessToken(env: Env, userId: string, role: string, expiresAt: number | string = `${ACCESS_TOKEN_TTL_SECONDS}s`): Promise<string> {
  return new SignJWT({ role })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(userId)
    .setIssuer(env.JWT_ISSUER)
    .setAudience(env.JWT_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(expiresAt)
    .sign(key(env));
}

// One key set per URL per isolate: jose caches and refreshes the keys itself.
const remoteKeySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function remoteKeySet(url: string) {
  let set = remoteKeySets.get(url);
  if (!set) {
    set = createRemoteJWKSet(new URL(url));
    remoteKeySets.set(url, set);
  }
  return set;
}

/** Verifies a bearer JWT and says whom it names; throws InvalidToken with a reason fit to show the caller. */
export async function verifyAccessToken(env: Env, token: string): Promise<TokenIdentity & { expiresAt: number }> {
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw new InvalidToken("The bearer token is not a JWT");
  }
  try {
    if (alg !== "HS256" && env.JWT_JWKS_URL) {
      const { payload } = await jwtVerify(token, remoteKeySet(env.JWT_JWKS_URL), {
        algorithms: ["RS256", "ES256", "PS256", "EdDSA"],
        issuer: env.JWT_JWKS_ISSUER || undefined,
        audience: env.JWT_JWKS_AUDIENCE || undefined,
      });
      if (typeof payload.email !== "string") throw new InvalidToken("The identity provider's token carries no email");
      return { email: payload.email.toLowerCase(), expiresAt: payload.exp ?? 0 };
    }
    const { payload } = await jwtVerify(token, key(env), {
      algorithms: ["HS256"],
      issuer: env.JWT_ISSUER,
      audience: env.JWT_AUDIENCE,
      requiredClaims: ["sub", "exp"],
    });
    return { userId: payload.sub!, expiresAt: payload.exp! };
  } catch (e) {
    if (e instanceof InvalidToken) throw e;
    if (e instanceof errors.JWTExpired) throw new InvalidToken("The access token has expired");
    if (e instanceof errors.JOSEAlgNotAllowed) throw new InvalidToken("The access token's algorithm is not accepted");
    if (e instanceof errors.JWTClaimValidationFailed) throw new InvalidToken(`The access token's ${e.claim} claim is not accepted`);
    throw new InvalidToken("The access token is invalid");
  }
}
