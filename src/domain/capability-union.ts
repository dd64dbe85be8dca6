/**
 * A server's effective capabilities: what its daemon sent together with what an admin declared in the hub (API.md
 * "People, invites and tokens"). Lists are joined (names compared without case), repos merged repo by repo, and for a
 * single value (max_concurrent_tasks, role, a custom field) the declared one wins. Neither side: null, as before.
 */
import type { Capabilities } from "../protocol/orchestratia-v1";
import { isPlainObject } from "./plain-object";

function joined(reported: unknown, declared: unknown): unknown {
  if (declared === undefined || declared === null) return reported;
  if (reported === undefined || reported === null) return declared;
  if (Array.isArray(reported) && Array.isArray(declared)) {
    const seen = new Set<unknown>();
    const key = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : JSON.stringify(v));
    return [...reported, ...declared].filter((v) => !seen.has(key(v)) && seen.add(key(v)));
  }
  if (isPlainObject(reported) && isPlainObject(declared)) {
    const out: Record<string, unknown> = { ...reported };
    for (const [k, v] of Object.entries(declared)) out[k] = joined(reported[k], v);
    return out;
  }
  return declared;
}

/** The union the hub matches by; null when neither the daemon nor an admin declared anything. */
export function effectiveCapabilities(reported: unknown, declared: unknown): Capabilities | null {
  if (!isPlainObject(reported) && !isPlainObject(declared)) return null;
  return joined(isPlainObject(reported) ? reported : undefined, isPlainObject(declared) ? declared : undefined) as Capabilities;
}
