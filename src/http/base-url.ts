import type { HubContext } from "./context";

/** The hub's public base URL: PUBLIC_URL, or the origin the request came to. */
export const hubBaseUrl = (c: HubContext) => (c.env.PUBLIC_URL || new URL(c.req.url).origin).replace(/\/+$/, "");
