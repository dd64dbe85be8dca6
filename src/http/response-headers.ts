/**
 * Headers added to a response once its handler has made it. Hono's `c.header` copies a finished response to change
 * its headers, which costs CPU on every request: these change them in place where they can. A response fetched from
 * elsewhere (a stored object's body, another object's answer) has immutable headers, and only then is it copied.
 */
import type { Context } from "hono";

/** Adds a header to the response. */
export function appendHeader(c: Context, name: string, value: string) {
  try {
    c.res.headers.append(name, value);
  } catch {
    c.header(name, value, { append: true });
  }
}

/** Sets a header of the response. */
export function setHeader(c: Context, name: string, value: string) {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}
