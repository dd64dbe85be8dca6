/**
 * The hub's API as the dashboard uses it: the typed client (client/), so a
 * call the hub's description does not have fails to compile. The access token
 * lives only in memory; the refresh token is an HttpOnly cookie scoped to the
 * refresh path, out of reach of page scripts. A 401 refreshes once and
 * retries, so the person never notices their access token expiring. The
 * client sends back the newest `X-D1-Bookmark` the hub answered with, so a
 * page never shows the database older than the person's last change or read.
 */
import { hubClient, type Schemas } from "../../client";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** Partial: an answer from something in front of the hub need not be a problem document. */
    readonly problem: Partial<Schemas["Problem"]>,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
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

/** Sends as the signed-in person; a 401 refreshes once and sends again, a refused refresh signs the person out. */
export async function asPerson(request: Request): Promise<Response> {
  // Kept before sending: a body can be read only once.
  const again = request.clone();
  const send = (r: Request) => {
    if (accessToken) r.headers.set("Authorization", `Bearer ${accessToken}`);
    return fetch(r);
  };
  const res = await send(request);
  if (res.status !== 401) return res;
  const refreshed = await refresh();
  if (refreshed === "ok") return send(again);
  if (refreshed === "signed-out") signedOutListeners.forEach((l) => l());
  return res;
}

/**
 * Sign-in, refresh and sign-out go out as they are: their 401 is the answer
 * (a wrong password, a spent cookie), not an access token to renew.
 */
const asIs = (request: Request) => fetch(request);

/** The one client the dashboard calls the hub with. */
export const hub = hubClient({ fetch: asPerson });

/** What a call of the client comes to: its data, or what went wrong. */
type Answer = { data?: unknown; error?: unknown; response: Response };
/** The data of a successful answer, as described (undefined for one without content, a 204). */
export type DataOf<A> = A extends { data: infer D; error?: never } ? ([D] extends [never] ? undefined : D) : never;

/** The data of an answer, or an ApiError carrying the hub's `detail`. */
export async function ok<A extends Answer>(call: Promise<A>): Promise<DataOf<A>> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(response.status, problemOf(error, response));
  // A 204 has no body: `data` is then undefined, which its description (no content) allows.
  return data as DataOf<A>;
}

function problemOf(error: unknown, res: Response): Partial<Schemas["Problem"]> {
  if (error && typeof error === "object") return error;
  return { title: res.statusText, status: res.status, detail: `The hub answered ${res.status}` };
}

/** Signs in; the hub sets the refresh cookie. */
export async function signIn(email: string, password: string): Promise<Schemas["User"]> {
  const tokens = await ok(hub.POST("/api/v1/auth/login", { body: { email, password, refresh_cookie: true }, fetch: asIs }));
  accessToken = tokens.access_token;
  return tokens.user;
}

/** Accepts an invite: the hub makes the account and signs it in (and sets the refresh cookie). */
export async function acceptInvite(body: { token: string; email: string; name: string; password: string }): Promise<Schemas["User"]> {
  const tokens = await ok(hub.POST("/api/v1/invites/accept", { body: { ...body, refresh_cookie: true }, fetch: asIs }));
  accessToken = tokens.access_token;
  return tokens.user;
}

/**
 * The hub's readable hint beside the refresh cookie (src/auth/refresh-cookie.ts): without it there is no cookie to
 * spend, and a refresh would only be refused, with an error in the console on every cold load before signing in.
 */
const SIGNED_IN_HINT = "orc_signed_in";
const hasSignedInHint = () => document.cookie.split(/;\s*/).some((c) => c.startsWith(`${SIGNED_IN_HINT}=`));
/** A refused cookie is cleared by the hub; its hint, by the page (a refusal carries one Set-Cookie). */
const dropSignedInHint = () => void (document.cookie = `${SIGNED_IN_HINT}=; Max-Age=0; Path=/; Secure; SameSite=Strict`);

/** On a cold load: the sign-in the refresh cookie keeps, when the hint says there is one. */
export const resumeSignIn = (): Promise<Refreshed> => (hasSignedInHint() ? refresh() : Promise.resolve("signed-out"));

async function rotate(): Promise<Refreshed> {
  try {
    accessToken = (await ok(hub.POST("/api/v1/auth/refresh", { body: {}, fetch: asIs }))).access_token;
    return "ok";
  } catch (e) {
    // Only the hub saying no ends the session; an outage or a throttle leaves it to the next try.
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      accessToken = null;
      dropSignedInHint();
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
  await hub.POST("/api/v1/auth/logout", { body: {}, fetch: asIs }).catch(() => undefined);
  signedOutListeners.forEach((l) => l());
}

/**
 * Sends a file to a session's machine (`POST .../uploads`, the raw bytes), reporting the bytes sent as they go:
 * fetch tells nothing of an upload's progress, XMLHttpRequest does. A 401 refreshes once and sends again.
 */
export async function uploadToSession(
  projectId: string,
  sessionId: string,
  file: File,
  onProgress: (sent: number, total: number) => void,
): Promise<Schemas["FileUpload"]> {
  const send = () =>
    new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open("POST", `/api/v1/projects/${projectId}/sessions/${sessionId}/uploads?filename=${encodeURIComponent(file.name)}`);
      if (accessToken) xhr.setRequestHeader("Authorization", `Bearer ${accessToken}`);
      xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
      xhr.onload = () => {
        let body: unknown = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          // Not JSON: something in front of the hub answered.
        }
        resolve({ status: xhr.status, body });
      };
      xhr.onerror = () => reject(new Error("The hub could not be reached"));
      xhr.send(file);
    });
  let answer = await send();
  if (answer.status === 401 && (await refresh()) === "ok") answer = await send();
  if (answer.status !== 201) {
    const problem =
      answer.body && typeof answer.body === "object" ? (answer.body as Partial<Schemas["Problem"]>) : { detail: `The hub answered ${answer.status}` };
    throw new ApiError(answer.status, problem);
  }
  return answer.body as Schemas["FileUpload"];
}
