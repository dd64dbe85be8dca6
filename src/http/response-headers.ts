/**
 * Headers added to a response once its handler has made it. Hono's `c.header` copies a finished response to change
 * its headers, which costs CPU on every request: these change them in place where they can. A response fetched from
 * elsewhere (a stored object's body, another object's answer) has immutable headers, and only then is it copied.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";

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

/**
 * Every answer of the Worker: a browser takes the declared Content-Type as it is and never guesses another from the
 * bytes (a JSON answer or a problem read as HTML). A WebSocket upgrade (101) is passed on as the room answered it.
 */
export const noSniff = createMiddleware(async (c, next) => {
  await next();
  if (c.res.status !== 101) setHeader(c, "X-Content-Type-Options", "nosniff");
});
