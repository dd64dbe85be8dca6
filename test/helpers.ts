/** Drives the real Worker (in workerd, against real D1) the way clients do: over HTTP. */
import { env } from "cloudflare:workers";
import { issueAccessToken } from "../src/auth/jwt";
import { expect } from "vitest";
import { hubClient, type HubCredentials } from "../client";
import { conformingFetch } from "./api-conformance";

export const BASE = "https://hub.test";
/** Any W3C traceparent the hub began (every task carries one). */
export const aTraceparent = () => expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
export const BOOTSTRAP_TOKEN = "test-bootstrap-token";

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
  const res = await conformingFetch(new Request(BASE + path, { method, headers, body }));
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

let userCounter = 0;
export async function createUser(adminToken: string, role: "admin" | "member" | "viewer") {
  const email = `${role}-${++userCounter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = `password-${userCounter}-long`;
  const created = await call("/api/v1/users", { token: adminToken, body: { email, password, role } });
  expect(created.status, created.text).toBe(201);
  const session = await login(email, password);
  expect(session.status, session.text).toBe(200);
  return { id: created.json.id as string, email, password, token: session.json.access_token as string };
}

export async function createProject(token: string, name = `project ${crypto.randomUUID().slice(0, 6)}`) {
  const reply = await call("/api/v1/projects", { token, body: { name } });
  expect(reply.status, reply.text).toBe(201);
  return reply.json as { id: string; name: string; slug: string };
}

export async function addMember(adminToken: string, projectId: string, userId: string) {
  const reply = await call(`/api/v1/projects/${projectId}/members`, { token: adminToken, body: { user_id: userId } });
  expect(reply.status, reply.text).toBe(201);
}

export async function registrationToken(adminToken: string, body: Record<string, unknown> = {}) {
  const reply = await call("/api/v1/servers/tokens", { token: adminToken, body });
  expect(reply.status, reply.text).toBe(201);
  return reply.json.token as string;
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

export async function registerAgent(adminToken: string, name: string, tokenBody: Record<string, unknown> = {}) {
  const token = await registrationToken(adminToken, tokenBody);
  const reply = await call("/api/v1/servers/register", { body: daemonRegistration(name, token) });
  expect(reply.status, reply.text).toBe(201);
  return { id: reply.json.id as string, apiKey: reply.json.api_key as string, name };
}

/** A person's access token signed like the hub's own, expiring at `expiresAt` (seconds since the epoch). */
export const accessTokenUntil = (userId: string, expiresAt: number, role = "member") => issueAccessToken(env, userId, role, expiresAt);
