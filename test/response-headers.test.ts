/** Headers added once a response is made: in place where its headers can change, on a copy where they cannot. */
import { Hono, type Context } from "hono";
import { expect, it } from "vitest";
import { appendHeader, setHeader } from "../src/http/response-headers";

const setting = (c: Context) => setHeader(c, "X-Request-Id", "req-1");
const appending = (c: Context) => {
  appendHeader(c, "Server-Timing", "worker");
  appendHeader(c, "Server-Timing", "room");
};

/** Each way of adding, with the header it adds and the value the answer then carries. */
const CASES = [
  [setting, "X-Request-Id", "req-1"],
  [appending, "Server-Timing", "worker, room"],
] as const;

/** An app whose middleware adds headers after the handler, noting whether the response it had was kept. */
function appAdding(add: (c: Context) => void) {
  const kept: boolean[] = [];
  const app = new Hono();
  app.use(async (c, next) => {
    await next();
    const made = c.res;
    add(c);
    kept.push(c.res === made);
  });
  app.get("/made", (c) => c.json({ ok: true }, 201));
  // A redirect's headers are immutable, as those of a response fetched from elsewhere are.
  app.get("/immutable", () => Response.redirect("https://hub.test/elsewhere", 302));
  return { app, kept };
}

it("changes the headers of a response the app made in place, with no copy", async () => {
  for (const [add, name, value] of CASES) {
    const { app, kept } = appAdding(add);
    const res = await app.request("/made");
    expect(res.status).toBe(201);
    expect(res.headers.get(name)).toBe(value);
    expect(await res.json()).toEqual({ ok: true });
    expect(kept).toEqual([true]);
  }
});

it("copies a response whose headers cannot change, and the copy carries them", async () => {
  for (const [add, name, value] of CASES) {
    const { app, kept } = appAdding(add);
    const res = await app.request("/immutable");
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("https://hub.test/elsewhere");
    expect(res.headers.get(name)).toBe(value);
    expect(kept).toEqual([false]);
  }
});
