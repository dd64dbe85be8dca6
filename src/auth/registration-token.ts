/**
 * Registration tokens are `orcreg_<base64url(hub URL)>.<secret>`: the official
 * daemon reads the hub's URL out of the token, so one string is all an
 * operator pastes on a new machine.
 */
import { base64url, fromBase64url, randomSecret } from "./secrets";

const PREFIX = "orcreg_";

export function formatRegistrationToken(hubUrl: string): string {
  return `${PREFIX}${base64url(new TextEncoder().encode(hubUrl))}.${randomSecret()}`;
}

export function parseRegistrationToken(token: string): { hubUrl: string; secret: string } | null {
  if (!token.startsWith(PREFIX)) return null;
  const dot = token.indexOf(".", PREFIX.length);
  if (dot < 0) return null;
  try {
    const hubUrl = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64url(token.slice(PREFIX.length, dot)));
    const secret = token.slice(dot + 1);
    return secret ? { hubUrl, secret } : null;
  } catch {
    return null;
  }
}
