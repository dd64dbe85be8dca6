/**
 * `orchestratia-connect` tokens: short-lived HS256 JWTs for one session's
 * machine and port. connect.py reads `hub_url`, `mode` and `session_id` from
 * the payload without verifying it; the hub verifies it at `/ws/tunnel`. Their
 * audience is not the access tokens', so neither is ever taken for the other.
 */
import { errors, jwtVerify, SignJWT } from "jose";
import type { Env } from "../runtime/env";

export const CONNECT_TOKEN_TTL_SECONDS = 5 * 60;

export interface ConnectClaims {
  tokenId: string;
  userId: string;
  projectId: string;
  sessionId: string;
  serverId: string;
  targetPort: number;
  expiresAt: number;
}

const key = (env: Env) => new TextEncoder().encode(env.JWT_SECRET);
const audience = (env: Env) => `${env.JWT_AUDIENCE}:tunnel`;

export async function issueConnectToken(env: Env, hubUrl: string, claims: Omit<ConnectClaims, "tokenId" | "expiresAt">) {
  const expiresAt = Math.floor(Date.now() / 1000) + CONNECT_TOKEN_TTL_SECONDS;
  const token = await new SignJWT({
    hub_url: hubUrl,
    mode: "ssh",
    project_id: claims.projectId,
    session_id: claims.sessionId,
    server_id: claims.serverId,
    target_port: claims.targetPort,
  })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.userId)
    .setJti(crypto.randomUUID())
    .setIssuer(env.JWT_ISSUER)
    .setAudience(audience(env))
    .setIssuedAt()
    .setExpirationTime(expiresAt)
    .sign(key(env));
  return { token, expiresAt };
}

/** The token's claims, or a reason fit to show the person. */
export async function verifyConnectToken(env: Env, token: string): Promise<ConnectClaims | string> {
  try {
    const { payload } = await jwtVerify(token, key(env), {
      algorithms: ["HS256"],
      issuer: env.JWT_ISSUER,
      audience: audience(env),
      requiredClaims: ["sub", "exp", "jti"],
    });
    const { project_id, session_id, server_id, target_port } = payload as Record<string, unknown>;
    if (typeof project_id !== "string" || typeof session_id !== "string" || typeof server_id !== "string" || !Number.isInteger(target_port)) {
      return "The connect token names no session";
    }
    return {
      tokenId: payload.jti!,
      userId: payload.sub!,
      projectId: project_id,
      sessionId: session_id,
      serverId: server_id,
      targetPort: target_port as number,
      expiresAt: payload.exp!,
    };
  } catch (e) {
    if (e instanceof errors.JWTExpired) return "The connect token has expired: make a new one";
    return "The connect token is invalid";
  }
}
