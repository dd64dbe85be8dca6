/**
 * CORS for browser dashboards served from another origin. Only the exact
 * origins listed in CORS_ORIGINS are granted access (with credentials, for the
 * refresh cookie); any other origin gets no Access-Control-Allow-Origin.
 */
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { HubEnv } from "./context";

/** Comma-separated exact origins; an Origin header never ends in "/", so a configured one that does is forgiven. */
export const allowedOrigins = (configured: string | undefined): string[] =>
  (configured ?? "")
    .split(",")
    .map((o) => o.trim().replace(/\/$/, ""))
    .filter(Boolean);

const withCors = cors({
  origin: (origin: string, c: Context<HubEnv>) => (allowedOrigins(c.env.CORS_ORIGINS).includes(origin) ? origin : null),
  allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
  allowHeaders: ["Authorization", "Content-Type", "Idempotency-Key", "X-API-Key", "X-D1-Bookmark", "traceparent"],
  exposeHeaders: ["X-Request-Id", "Server-Timing", "Idempotent-Replayed", "Retry-After", "Allow", "X-D1-Bookmark"],
  credentials: true,
  maxAge: 600,
});

/**
 * Requests without an Origin (agents, curl) are left alone, and so are
 * WebSocket upgrades: browsers apply no CORS check to them (the socket
 * authenticates with its own token), so the room's 101 is passed on untouched.
 */
export const apiCors: MiddlewareHandler<HubEnv> = async (c, next) => {
  if (!c.req.header("Origin") || c.req.header("Upgrade")?.toLowerCase() === "websocket") return next();
  return withCors(c, next);
};
