/** Drives the real Worker (in workerd, against real D1) the way clients do: over HTTP. */
import { env } from "cloudflare:workers";
import { issueAccessToken } from "../src/auth/jwt";
import { expect } from "vitest";
import { hubClient, type HubCredentials, type paths } from "../client";
import { conformingFetch } from "./api-conformance";

export const BASE = "https://hub.test";
/** Any W3C traceparent the hub began (every task carries one). */
export const aTraceparent = () => expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
export const BOOTSTRAP_TOKEN = "test-bootstrap-token";

/** A request to a URL the hub handed out (signed DataRef URLs), held to the description like every other. */
export const fetchUrl = (url: string, init?: RequestInit) => conformingFetch(new Request(url, init));

/** Polls `read` until `done` says its value will do (every 25 ms); fails after `timeoutMs`, quoting the last value. */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last ${JSON.stringify(value)?.slice(0, 600)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The typed client (client/), calling the Worker as this person or server; every answer is held to the description. */
export const hubAs = (credentials: HubCredentials = {}) => hubClient({ baseUrl: BASE, fetch: conformingFetch, ...credentials });

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Sent as is, instead of `body` serialised as JSON. */
  raw?: string;
  token?: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  headers: Headers;
  // Tests read arbitrary response fields.
  json: any;
  text: string;
}

let ipCounter = 0;
/** Each call comes from its own client address, so per-IP login throttling only bites where a test means it to. */
const nextIp = () => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;

export async function call(path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers = new Headers(opts.headers);
  if (opts.token) headers.set("Authorization", `Bearer ${opts.token}`);
  if (opts.apiKey) headers.set("X-API-Key", opts.apiKey);
  if (!headers.has("CF-Connecting-IP")) headers.set("CF-Connecting-IP", nextIp());
  let body: string | undefined = opts.raw;
  if (body === undefined && opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  const method = opts.method ?? (body !== undefined ? "POST" : "GET");
  return replyOf(await conformingFetch(new Request(BASE + path, { method, headers, body })));
}

/** A response as the tests read it: its status, headers, text and JSON (undefined when it is not JSON). */
export async function replyOf(res: Response): Promise<Reply> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Asserts a problem+json answer with this status and code. */
export function expectProblem(reply: Reply, status: number, code: string) {
  expect({ status: reply.status, code: reply.json?.code }, reply.text).toEqual({ status, code });
  expect(reply.headers.get("Content-Type")).toBe("application/problem+json");
  expect(typeof reply.json.detail).toBe("string");
  expect(reply.json.title).toBeTruthy();
}

export const ADMIN = { email: "admin@example.com", password: "admin-password-1" };

export async function bootstrapAdmin(): Promise<string> {
  const reply = await call("/api/v1/auth/bootstrap", { body: ADMIN, token: BOOTSTRAP_TOKEN });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.access_token;
}

export async function login(email: string, password: string): Promise<Reply> {
  return call("/api/v1/auth/login", { body: { email, password } });
}

/** The answer's data, once its status is `status` (the typed client's calls; the problem is shown when it is not). */
export async function answered<T>(reply: Promise<{ data?: T; error?: unknown; response: Response }>, status = 200): Promise<T> {
  const { data, error, response } = await reply;
  expect(response.status, JSON.stringify(error)).toBe(status);
  return data as T;
}

let userCounter = 0;
export async function createUser(adminToken: string, role: "admin" | "member" | "viewer") {
  const email = `${role}-${++userCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = `password-${userCounter}-long`;
  const created = await answered(hubAs({ token: adminToken }).POST("/api/v1/users", { body: { email, password, role } }), 201);
  const session = await answered(hubAs().POST("/api/v1/auth/login", { body: { email, password } }));
  return { id: created.id, email, password, token: session.access_token };
}

export async function createProject(token: string, name = `project ${crypto.randomUUID().slice(0, 6)}`) {
  return answered(hubAs({ token }).POST("/api/v1/projects", { body: { name } }), 201);
}

export async function addMember(adminToken: string, projectId: string, userId: string) {
  await answered(hubAs({ token: adminToken }).POST("/api/v1/projects/{id}/members", { params: { path: { id: projectId } }, body: { user_id: userId } }), 201);
}

type TokenRequest = NonNullable<paths["/api/v1/servers/tokens"]["post"]["requestBody"]>["content"]["application/json"];

export async function registrationToken(adminToken: string, body: TokenRequest = {}) {
  const issued = await answered(hubAs({ token: adminToken }).POST("/api/v1/servers/tokens", { body }), 201);
  return issued.token;
}

/** The body the official daemon sends to register. */
export function daemonRegistration(name: string, token: string) {
  return {
    name,
    hostname: `${name}.internal`,
    ip: "0.0.0.0",
    os: "linux",
    repos: { "api-gateway": "/home/dev/api-gateway" },
    system_info: { cpu_count: 8, memory_total_gb: 31.2, platform: "Linux", os_username: "dev" },
    registration_token: token,
    machine_id: "0123456789abcdef0123456789abcdef",
    mac_address: "aa:bb:cc:dd:ee:ff",
  };
}

export async function registerAgent(adminToken: string, name: string, tokenBody: TokenRequest = {}) {
  const token = await registrationToken(adminToken, tokenBody);
  const registered = await answered(hubAs().POST("/api/v1/servers/register", { body: daemonRegistration(name, token) }), 201);
  return { id: registered.id, apiKey: registered.api_key, name };
}

/** A person's access token signed like the hub's own, expiring at `expiresAt` (seconds since the epoch). */
export const accessTokenUntil = (userId: string, expiresAt: number, role = "member") => issueAccessToken(env, userId, role, expiresAt);
