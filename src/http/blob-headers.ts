/**
 * What a DataRef's bytes are served with. They are whatever an agent or a member uploaded, served from the hub's own
 * origin (the dashboard's, whose refresh cookie a page there could spend), so nothing in them may ever run there:
 * every answer on a blob URL is sandboxed and never sniffed, and the bytes are a download unless their type is one a
 * browser only shows.
 */
import { createMiddleware } from "hono/factory";
import type { HubEnv } from "./context";
import { setHeader } from "./response-headers";

/**
 * On every answer of a blob URL, bytes and refusals alike: a page the browser renders anyway (a proxy dropped the
 * disposition, an old browser ignores it) has an opaque origin, no scripts, no plugins and loads nothing.
 */
export const BLOB_HEADERS = {
  "Content-Security-Policy": "default-src 'none'; sandbox",
  "X-Content-Type-Options": "nosniff",
} as const;

export const withBlobHeaders = createMiddleware<HubEnv>(async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(BLOB_HEADERS)) setHeader(c, name, value);
});

/**
 * Types a browser shows without running anything: shown inline. Everything else is an attachment, SVG and HTML
 * (which carry scripts) and PDF (whose viewer runs scripts of its own) among them.
 */
const INLINE_TYPES = new Set(["text/plain", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp"]);

/** A Content-Type's type and subtype, lower-cased, without its parameters. */
const essenceOf = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();

/**
 * A media type as a header carries it: `type/subtype`, then `; name=value` parameters, each value a token or a quoted
 * string without quotes, backslashes or commas. Nothing else may follow: a browser splits a Content-Type on commas and
 * takes the last type, so `text/plain;,text/html` would be served inline and rendered as HTML.
 */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const PARAMETER = `\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[\\x20\\x21\\x23-\\x2b\\x2d-\\x5b\\x5d-\\x7e]*")`;
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:${PARAMETER})*$`);
export const isMediaType = (value: string) => MEDIA_TYPE.test(value);

/** Control characters (C0, DEL, C1): a filename holding one cannot be put in a header. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** A filename a header can carry: no control character, and no lone half of a surrogate pair (which has no UTF-8). */
export const isHeaderSafeFilename = (name: string) => !CONTROL_CHARACTER.test(name) && name.isWellFormed();

/** What the bytes are served as: the declared type when it is a valid media type (rows from before the rule may not be). */
export const servedContentType = (contentType: string) => (isMediaType(contentType) ? contentType : "application/octet-stream");

/**
 * RFC 6266: `inline` only for an inert type, else `attachment`; the filename as a quoted ASCII fallback (anything
 * else replaced by `_`) and, when that is not the name itself, exactly as `filename*` (RFC 8187, UTF-8).
 */
export function contentDisposition(contentType: string, filename: string | null): string {
  const kind = INLINE_TYPES.has(essenceOf(contentType)) ? "inline" : "attachment";
  if (!filename) return kind;
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  if (fallback === filename) return `${kind}; filename="${filename}"`;
  // Rows from before the rule may hold a lone surrogate, which encodeURIComponent refuses: it becomes U+FFFD.
  const encoded = encodeURIComponent(filename.toWellFormed()).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
