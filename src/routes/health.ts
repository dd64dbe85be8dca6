import { Hono } from "hono";
import { z } from "zod";
import { HUB_PROTOCOL_VERSIONS } from "../domain/protocol-version";
import type { HubEnv } from "../http/context";
import { Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import { HUB_VERSION } from "../runtime/version";

export const healthRoutes = new Hono<HubEnv>();

/** Unauthenticated liveness: answers ok only when D1 answers too. */
const health = z.object({
  status: z.literal("ok"),
  version: z.string().meta({ description: "The hub's version" }),
  protocol_versions: z.array(z.enum(HUB_PROTOCOL_VERSIONS)).meta({ description: "The Orchestratia protocol versions the hub speaks" }),
});

healthRoutes.get(
  "/",
  documented({
    id: "getHealth",
    tag: "Health",
    summary: "Check health",
    description: "Whether the hub and its database answer.\n\n" + "503 `DATABASE_UNAVAILABLE` when D1 does not answer.",
    caller: "anyone",
    responses: { 200: health },
  }),
  async (c) => {
    try {
      await c.env.DB.prepare("SELECT 1").first();
    } catch {
      throw new Problem(503, "DATABASE_UNAVAILABLE", "The database is not answering");
    }
    return c.json({ status: "ok", version: HUB_VERSION, protocol_versions: [...HUB_PROTOCOL_VERSIONS] } satisfies z.infer<typeof health>);
  },
);
