/** Tokens from an external identity provider (e.g. Cloudflare Access), whose key set is served at JWT_JWKS_URL. */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { buildApp } from "../src/app";
import { BASE, bootstrapAdmin, createUser } from "./helpers";

const IDP = { url: "https://idp.test/cdn-cgi/access/certs", issuer: "https://idp.test", audience: "hub-audience" };
const app = buildApp();
const idpEnv = { ...env, JWT_JWKS_URL: IDP.url, JWT_JWKS_ISSUER: IDP.issuer, JWT_JWKS_AUDIENCE: IDP.audience };

let privateKey: CryptoKey;
let memberEmail: string;
let jwksRequests = 0;

beforeAll(async () => {
  const pair = await generateKeyPair("RS256", { extractable: true });
  privateKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  // The identity provider is outside the machine: fake it at the network edge.
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== IDP.url) return realFetch(input, init);
    jwksRequests++;
    return Response.json({ keys: [jwk] });
  });
  const admin = await bootstrapAdmin();
  memberEmail = (await createUser(admin, "member")).email;
});

afterAll(() => vi.restoreAllMocks());

const idpToken = (claims: Record<string, unknown>, audience = IDP.audience) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(IDP.issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(privateKey);

async function me(token: string, environment = idpEnv) {
  const res = await app.fetch(new Request(`${BASE}/api/v1/auth/me`, { headers: { Authorization: `Bearer ${token}` } }), environment, createExecutionContext());
  return { status: res.status, json: (await res.json()) as any };
}

it("accepts the provider's token and maps it to the user with that email", async () => {
  const reply = await me(await idpToken({ email: memberEmail.toUpperCase() }));
  expect(reply.status).toBe(200);
  expect(reply.json).toMatchObject({ email: memberEmail, role: "member" });
  expect(jwksRequests).toBeGreaterThan(0);
});

it("refuses a provider token for an email with no account, or for another audience", async () => {
  const stranger = await me(await idpToken({ email: "stranger@example.com" }));
  expect(stranger).toMatchObject({ status: 403, json: { code: "NO_ACCOUNT" } });
  const otherAudience = await me(await idpToken({ email: memberEmail }, "another-app"));
  expect(otherAudience).toMatchObject({ status: 401, json: { code: "INVALID_TOKEN" } });
  const noEmail = await me(await idpToken({ sub: "x" }));
  expect(noEmail.status).toBe(401);
});

it("ignores provider tokens when no JWKS URL is configured", async () => {
  const reply = await me(await idpToken({ email: memberEmail }), { ...env, JWT_JWKS_URL: "" });
  expect(reply).toMatchObject({ status: 401, json: { code: "INVALID_TOKEN" } });
});
