/**
 * Secrets the hub must use again, not just check (webhook signing secrets),
 * are kept sealed: AES-GCM under a key derived from the DATA_KEY secret, so a
 * copy of the database alone does not reveal them.
 */
import { Problem } from "../http/problem";

const VERSION = "v1";

async function keyOf(dataKey: string | undefined): Promise<CryptoKey> {
  if (!dataKey) throw new Problem(503, "NOT_CONFIGURED", "The hub has no DATA_KEY secret to seal secrets with: set it (wrangler secret put DATA_KEY)");
  const raw = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`orchestratia sealed secrets:${dataKey}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

export async function seal(dataKey: string | undefined, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyOf(dataKey), new TextEncoder().encode(secret)));
  return `${VERSION}.${iv.toBase64()}.${sealed.toBase64()}`;
}

export async function unseal(dataKey: string | undefined, sealed: string): Promise<string> {
  const [version, iv, data] = sealed.split(".");
  if (version !== VERSION || !iv || !data) throw new Error("not a sealed secret");
  const opened = await crypto.subtle.decrypt({ name: "AES-GCM", iv: Uint8Array.fromBase64(iv) }, await keyOf(dataKey), Uint8Array.fromBase64(data));
  return new TextDecoder().decode(opened);
}
