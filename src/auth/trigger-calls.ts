/**
 * Whether a call to a trigger's door carries its secret: as a bearer (its sha256 compared in constant time), a
 * Standard Webhooks signature (checked by the `standardwebhooks` library, five minutes either side of now), or GitHub's
 * `X-Hub-Signature-256` (checked by `@octokit/webhooks-methods`). A refusal never says which part was wrong.
 */
import { verify as verifyGithub } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { sha256Hex } from "./secrets";

const encoder = new TextEncoder();

/** Constant-time equality of two strings of the same length (hex digests here). */
function sameDigest(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.byteLength !== y.byteLength) return false;
  return crypto.subtle.timingSafeEqual(x, y);
}

/** `Authorization: Bearer <secret>`, against the secret's digest. */
export async function bearerVerifies(authorization: string | undefined, secretHash: string): Promise<boolean> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  if (!match) return false;
  return sameDigest(await sha256Hex(match[1]!), secretHash);
}

export interface StandardHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** A Standard Webhooks signature over the raw body, by the unsealed secret, within the library's timestamp window. */
export function standardSignatureVerifies(secret: string, body: string, headers: StandardHeaders): boolean {
  try {
    new Webhook(secret).verify(body, { ...headers }, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
}

/** GitHub's `X-Hub-Signature-256: sha256=<hex>` over the raw body, by the unsealed secret. */
export async function githubSignatureVerifies(secret: string, body: string, signature: string | undefined): Promise<boolean> {
  if (!signature) return false;
  try {
    return await verifyGithub(secret, body, signature);
  } catch {
    return false;
  }
}
