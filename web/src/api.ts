/**
 * The hub's API as the dashboard uses it. The access token lives only in
 * memory; the refresh token is an HttpOnly cookie scoped to the refresh path,
 * out of reach of page scripts. A 401 refreshes once and retries, so the
 * person never notices their access token expiring.
 */
import type { Me, Problem } from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
}

interface TokenBody {
  access_token: string;
  expires_in: number;
  user: Me;
}

/** What to tell the person when a call failed: the hub's `detail`, or that it could not be reached. */
export const messageOf = (e: unknown) => (e instanceof ApiError ? e.message : "The hub could not be reached");

let accessToken: string | null = null;
let refreshing: Promise<Refreshed> | null = null;

/** What a refresh came to: a fresh token, no session any more, or no answer from the hub (keep what we have). */
export type Refreshed = "ok" | "signed-out" | "unavailable";
const signedOutListeners = new Set<() => void>();

export const onSignedOut = (listener: () => void) => {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
};

export const currentAccessToken = () => accessToken;

async function readProblem(res: Response): Promise<Problem> {
  try {
    return (await res.json()) as Problem;
  } catch {
    return { title: res.statusText, status: res.status, detail: `The hub answered ${res.status}` };
  }
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
  if (!res.ok) throw new ApiError(res.status, await readProblem(res));
  return (await res.json()) as T;
}

/** Signs in; the hub sets the refresh cookie. */
export async function signIn(email: string, password: string): Promise<Me> {
  const tokens = await post<TokenBody>("/api/v1/auth/login", { email, password, refresh_cookie: true });
  accessToken = tokens.access_token;
  return tokens.user;
}

async function rotate(): Promise<Refreshed> {
  try {
    accessToken = (await post<TokenBody>("/api/v1/auth/refresh", {})).access_token;
    return "ok";
  } catch (e) {
    // Only the hub saying no ends the session; an outage or a throttle leaves it to the next try.
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      accessToken = null;
      return "signed-out";
    }
    return "unavailable";
  }
}

/**
 * A fresh access token from the refresh cookie. Tabs take turns (a Web Lock):
 * the hub retires a refresh token once used, so two tabs presenting the same
 * cookie at once would end the sign-in; the second finds the cookie rotated.
 */
export function refresh(): Promise<Refreshed> {
  refreshing ??= (navigator.locks ? navigator.locks.request("orchestratia-refresh", rotate) : rotate()).finally(() => {
    refreshing = null;
  });
  return refreshing;
}

export async function signOut() {
  accessToken = null;
  await fetch("/api/v1/auth/logout", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}", credentials: "same-origin" }).catch(() => undefined);
  signedOutListeners.forEach((l) => l());
}

/** Calls the API as the signed-in person; problems become ApiErrors carrying the hub's `detail`. */
export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const send = () =>
    fetch(path, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: {
        ...(accessToken ? { Authorization: `Bearer ${accessToken}` } : {}),
        ...(init.body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  let res = await send();
  if (res.status === 401) {
    const refreshed = await refresh();
    if (refreshed === "ok") res = await send();
    else if (refreshed === "signed-out") signedOutListeners.forEach((l) => l());
  }
  if (!res.ok) throw new ApiError(res.status, await readProblem(res));
  // Deletions may answer 204, with no body to read.
  return (res.status === 204 ? undefined : await res.json()) as T;
}
