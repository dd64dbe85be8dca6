/** People for the people tests: each made by an admin and signed in from an address of its own (throttling is tested on its own). */
import { expect } from "vitest";
import { call, login } from "./helpers";

let people = 0;
export async function createPerson(adminToken: string, role: "admin" | "member" | "viewer") {
  const email = `person-${++people}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = `password-${people}-long`;
  const created = await call("/api/v1/users", { token: adminToken, body: { email, password, role } });
  expect(created.status, created.text).toBe(201);
  const session = await login(email, password);
  expect(session.status, session.text).toBe(200);
  return { id: created.json.id as string, email, password, token: session.json.access_token as string, refresh: session.json.refresh_token as string };
}
