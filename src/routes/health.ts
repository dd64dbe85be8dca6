import { Hono } from "hono";
import { HUB_PROTOCOL_VERSIONS } from "../domain/protocol-version";
import type { HubEnv } from "../http/context";
import { Problem } from "../http/problem";
import { HUB_VERSION } from "../version";

export const healthRoutes = new Hono<HubEnv>();

/** Unauthenticated liveness: answers ok only when D1 answers too. */
healthRoutes.get("/", async (c) => {
  try {
    await c.env.DB.prepare("SELECT 1").first();
  } catch {
    throw new Problem(503, "DATABASE_UNAVAILABLE", "The database is not answering");
  }
  return c.json({ status: "ok", version: HUB_VERSION, protocol_versions: HUB_PROTOCOL_VERSIONS });
});
