/**
 * The hub's typed client: openapi-fetch over the types generated from the
 * hub's own OpenAPI document (`npm run build:api` writes client/schema.d.ts).
 * Paths, parameters, bodies and answers are checked against the description
 * at compile time, so callers break when the API and its description part.
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema";

export type HubClient = Client<paths>;
export type Schemas = components["schemas"];
export type { paths };

export interface HubCredentials {
  /** A person's access token (or a function giving the current one, for tokens that are renewed). */
  token?: string | (() => string | undefined);
  /** A server's API key (`orc_...`). */
  apiKey?: string;
}

export function hubClient(options: ClientOptions & HubCredentials = {}): HubClient {
  const { token, apiKey, ...rest } = options;
  const client = createClient<paths>(rest);
  client.use({
    onRequest({ request }) {
      const bearer = typeof token === "function" ? token() : token;
      if (bearer && !request.headers.has("Authorization")) request.headers.set("Authorization", `Bearer ${bearer}`);
      if (apiKey && !request.headers.has("X-API-Key")) request.headers.set("X-API-Key", apiKey);
      return request;
    },
  });
  return client;
}
