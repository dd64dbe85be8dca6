import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN, bootstrapAdmin, call, createProject, expectProblem, login, type Reply } from "./helpers";
import { openSocket } from "./sockets";

const DASHBOARD = "https://dash.example.test";
const THIRTY_DAYS = 30 * 24 * 60 * 60;

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

/** The Set-Cookies of a reply by name, each split into its value and its attributes (names lower-cased). */
function cookiesOf(reply: Reply) {
  return Object.fromEntries(
    reply.headers.getSetCookie().map((cookie) => {
      const [pair, ...attributes] = cookie.split("; ");
      const [name, value] = pair!.split("=");
      const attrs = Object.fromEntries(attributes.map((a) => [a.split("=")[0]!.toLowerCase(), a.split("=")[1] ?? true]));
      return [name!, { value: decodeURIComponent(value!), attrs }];
    }),
  );
}

/** The refresh cookie a reply sets, the only cookie it sets besides the page's hint. */
function refreshCookieOf(reply: Reply) {
  const cookies = cookiesOf(reply);
  expect(Object.keys(cookies).filter((name) => name !== "orc_signed_in")).toEqual(["orc_refresh"]);
  return cookies.orc_refresh!;
}

/** The page's hint that a refresh cookie is set. */
const HINT = { value: "1", attrs: { path: "/", secure: true, samesite: "Strict", "max-age": String(THIRTY_DAYS) } };

const withCookie = (value: string) => ({ Cookie: `orc_refresh=${encodeURIComponent(value)}` });

async function cookieLogin() {
  const reply = await call("/api/v1/auth/login", { body: { ...ADMIN, refresh_cookie: true } });
  expect(reply.status, reply.text).toBe(200);
  return { reply, cookie: refreshCookieOf(reply).value };
}

function expectCleared(reply: Reply) {
  const { value, attrs } = refreshCookieOf(reply);
  expect(value).toBe("");
  expect(attrs).toEqual({ "max-age": "0", path: "/api/v1/auth", httponly: true, secure: true, samesite: "Strict" });
}

describe("refresh token in a cookie", () => {
  it("signs in with the refresh token only in an HttpOnly, Secure, SameSite=Strict cookie scoped to /api/v1/auth", async () => {
    const { reply } = await cookieLogin();
    expect(reply.json).toMatchObject({ token_type: "bearer", expires_in: 900, user: { email: ADMIN.email } });
    expect(reply.json).not.toHaveProperty("refresh_token");
    const { value, attrs } = refreshCookieOf(reply);
    expect(value).toMatch(/^orr_/);
    expect(attrs).toEqual({ path: "/api/v1/auth", httponly: true, secure: true, samesite: "Strict", "max-age": String(THIRTY_DAYS) });
    expect((await call("/api/v1/auth/me", { token: reply.json.access_token })).status).toBe(200);
    // Beside it, a hint the page can read (not HttpOnly), with no secret and the same lifetime.
    expect(cookiesOf(reply).orc_signed_in).toEqual(HINT);
  });

  it("keeps login without refresh_cookie as it was: refresh token in the body, no cookie", async () => {
    for (const body of [ADMIN, { ...ADMIN, refresh_cookie: false }]) {
      const reply = await call("/api/v1/auth/login", { body });
      expect(reply.status).toBe(200);
      expect(reply.json.refresh_token).toMatch(/^orr_/);
      expect(reply.headers.getSetCookie()).toEqual([]);
    }
    expectProblem(await call("/api/v1/auth/login", { body: { ...ADMIN, refresh_cookie: "yes" } }), 422, "VALIDATION_FAILED");
  });

  it("refreshes with only the cookie, rotating it; the spent cookie then revokes the whole sign-in", async () => {
    const { cookie: first } = await cookieLogin();
    const second = await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(first) });
    expect(second.status, second.text).toBe(200);
    expect(second.json).toMatchObject({ token_type: "bearer", user: { email: ADMIN.email } });
    expect(second.json).not.toHaveProperty("refresh_token");
    const rotated = refreshCookieOf(second);
    expect(rotated.value).toMatch(/^orr_/);
    expect(rotated.value).not.toBe(first);
    expect(rotated.attrs["max-age"]).toBe(String(THIRTY_DAYS));
    expect(cookiesOf(second).orc_signed_in, "the hint is renewed with the cookie").toEqual(HINT);
    expect((await call("/api/v1/auth/me", { token: second.json.access_token })).status).toBe(200);

    // `{}` is an empty body too.
    const third = await call("/api/v1/auth/refresh", { body: {}, headers: withCookie(rotated.value) });
    expect(third.status, third.text).toBe(200);
    const latest = refreshCookieOf(third).value;

    // As with the body form, presenting a spent token is taken as theft: the family dies and the cookie is dropped.
    const reused = await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(first) });
    expectProblem(reused, 401, "REFRESH_TOKEN_REUSED");
    expectCleared(reused);
    const afterTheft = await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(latest) });
    expectProblem(afterTheft, 401, "INVALID_REFRESH_TOKEN");
    expectCleared(afterTheft);
  });

  it("refuses a refresh with neither token nor cookie, and clears a bad cookie", async () => {
    const neither = await call("/api/v1/auth/refresh", { method: "POST" });
    expectProblem(neither, 401, "INVALID_REFRESH_TOKEN");
    expect(neither.headers.getSetCookie()).toEqual([]);
    expectProblem(await call("/api/v1/auth/refresh", { body: {} }), 401, "INVALID_REFRESH_TOKEN");

    const bad = await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie("orr_not-a-token") });
    expectProblem(bad, 401, "INVALID_REFRESH_TOKEN");
    expectCleared(bad);
  });

  it("prefers a refresh_token in the body, answering as the body form always did", async () => {
    const { cookie } = await cookieLogin();
    const session = (await login(ADMIN.email, ADMIN.password)).json;
    const reply = await call("/api/v1/auth/refresh", { body: { refresh_token: session.refresh_token }, headers: withCookie(cookie) });
    expect(reply.status).toBe(200);
    expect(reply.json.refresh_token).toMatch(/^orr_/);
    expect(reply.headers.getSetCookie()).toEqual([]);
    // The cookie was not spent.
    expect((await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(cookie) })).status).toBe(200);
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: "" } }), 422, "VALIDATION_FAILED");
  });

  it("signs out with the cookie: the family is revoked and the cookie cleared", async () => {
    const { cookie } = await cookieLogin();
    const rotated = refreshCookieOf(await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(cookie) })).value;
    const out = await call("/api/v1/auth/logout", { method: "POST", headers: withCookie(rotated) });
    expect(out.status, out.text).toBe(200);
    expect(out.json).toEqual({ status: "ok" });
    expectCleared(out);
    expect(cookiesOf(out).orc_signed_in).toEqual({ value: "", attrs: { "max-age": "0", path: "/", secure: true, samesite: "Strict" } });
    expectProblem(await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(rotated) }), 401, "INVALID_REFRESH_TOKEN");

    // Signing out again, or with no cookie left, still signs out.
    expectCleared(await call("/api/v1/auth/logout", { method: "POST", headers: withCookie(rotated) }));
    expectCleared(await call("/api/v1/auth/logout", { method: "POST" }));
  });

  it("keeps the body form of logout as it was", async () => {
    const { cookie } = await cookieLogin();
    const session = (await login(ADMIN.email, ADMIN.password)).json;
    const out = await call("/api/v1/auth/logout", { body: { refresh_token: session.refresh_token }, headers: withCookie(cookie) });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()).toEqual([]);
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: session.refresh_token } }), 401, "INVALID_REFRESH_TOKEN");
    expect((await call("/api/v1/auth/refresh", { method: "POST", headers: withCookie(cookie) })).status).toBe(200);
  });
});

describe("CORS for /api/*", () => {
  const preflight = (path: string, origin: string, method = "POST") =>
    call(path, {
      method: "OPTIONS",
      headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization,content-type" },
    });

  it("answers a preflight from a listed origin with 204 and what it may send", async () => {
    for (const path of ["/api/v1/projects", "/api/v1/auth/refresh", `/api/v1/projects/${crypto.randomUUID()}`]) {
      const reply = await preflight(path, DASHBOARD, "PATCH");
      expect(reply.status, `${path}: ${reply.text}`).toBe(204);
      expect(reply.text).toBe("");
      const h = reply.headers;
      expect(h.get("Access-Control-Allow-Origin")).toBe(DASHBOARD);
      expect(h.get("Access-Control-Allow-Credentials")).toBe("true");
      expect(h.get("Access-Control-Allow-Methods")!.split(",")).toEqual(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
      expect(h.get("Access-Control-Allow-Headers")!.split(",")).toEqual([
        "Authorization",
        "Content-Type",
        "Idempotency-Key",
        "X-API-Key",
        "X-D1-Bookmark",
        "traceparent",
      ]);
      expect(h.get("Access-Control-Max-Age")).toBe("600");
      expect(h.get("Vary")).toContain("Origin");
    }
  });

  it("grants nothing to an origin that is not listed", async () => {
    const pre = await preflight("/api/v1/projects", "https://evil.example.test");
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const get = await call("/api/v1/health", { headers: { Origin: "https://evil.example.test" } });
    expect(get.status).toBe(200);
    expect(get.headers.get("Access-Control-Allow-Origin")).toBeNull();
    // Origins are matched exactly.
    const near = await call("/api/v1/health", { headers: { Origin: "https://dash.example.test:8443" } });
    expect(near.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("lets a listed origin read answers, problems included, and the headers the dashboard needs", async () => {
    const health = await call("/api/v1/health", { headers: { Origin: DASHBOARD } });
    expect(health.status).toBe(200);
    expect(health.headers.get("Access-Control-Allow-Origin")).toBe(DASHBOARD);
    expect(health.headers.get("Access-Control-Allow-Credentials")).toBe("true");
    expect(health.headers.get("Access-Control-Expose-Headers")!.split(",")).toEqual([
      "X-Request-Id",
      "Server-Timing",
      "Idempotent-Replayed",
      "Retry-After",
      "Allow",
      "X-D1-Bookmark",
    ]);
    expect(health.headers.get("X-Request-Id")).toBeTruthy();
    expect(health.headers.get("Vary")).toContain("Origin");

    const signedOut = await call("/api/v1/projects", { headers: { Origin: DASHBOARD } });
    expectProblem(signedOut, 401, "UNAUTHORIZED");
    expect(signedOut.headers.get("Access-Control-Allow-Origin")).toBe(DASHBOARD);

    const wrongMethod = await call("/api/v1/auth/login", { method: "GET", headers: { Origin: DASHBOARD } });
    expectProblem(wrongMethod, 405, "METHOD_NOT_ALLOWED");
    expect(wrongMethod.headers.get("Allow")).toBe("POST");
    expect(wrongMethod.headers.get("Access-Control-Allow-Origin")).toBe(DASHBOARD);

    const signIn = await call("/api/v1/auth/login", { body: { ...ADMIN, refresh_cookie: true }, headers: { Origin: DASHBOARD } });
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get("Access-Control-Allow-Origin")).toBe(DASHBOARD);
    expect(refreshCookieOf(signIn).value).toMatch(/^orr_/);
  });

  it("adds no CORS headers to requests without an Origin", async () => {
    const reply = await call("/api/v1/health");
    expect([...reply.headers.keys()].filter((k) => k.startsWith("access-control-"))).toEqual([]);
    // A preflight-shaped request without Origin is not a preflight: OPTIONS is not a method of the API.
    expectProblem(await call("/api/v1/projects", { method: "OPTIONS" }), 405, "METHOD_NOT_ALLOWED");
  });

  it("leaves a dashboard's WebSocket upgrade from a listed origin alone", async () => {
    const project = await createProject(admin);
    const socket = await openSocket(`/api/v1/projects/${project.id}/ws`, { Origin: DASHBOARD, "Sec-WebSocket-Protocol": `bearer, ${admin}` });
    expect(socket.protocol).toBe("bearer");
    socket.ws.close();
  });
});
