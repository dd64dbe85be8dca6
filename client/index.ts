/**
 * The hub's typed client: openapi-fetch over the types generated from the
 * hub's own OpenAPI document (`npm run build:api` writes client/schema.d.ts).
 * Paths, parameters, bodies and answers are checked against the description
 * at compile time, so callers break when the API and its description part.
 */
import createClient, { type Client, type ClientOptions, type ClientPathsWithMethod, type FetchResponse, type MaybeOptionalInit } from "openapi-fetch";
import type { components, paths } from "./schema";

export type HubClient = Client<paths>;

type Method = "get" | "put" | "post" | "delete" | "patch";
type Operation<P extends keyof paths, M extends Method> = M extends keyof paths[P] ? paths[P][M] : never;
type Init<P extends keyof paths, M extends Method> = M extends keyof paths[P] ? MaybeOptionalInit<paths[P], M> : never;
/**
 * A call whose options are checked against the description rather than
 * inferred from the call: openapi-fetch infers them, so a body field or query
 * parameter the description lacks passes unnoticed; here it is a type error.
 */
type CheckedMethod<M extends Method> = <P extends ClientPathsWithMethod<HubClient, M>>(
  url: P,
  ...init: undefined extends Init<P, M> ? [init?: Init<P, M>] : [init: Init<P, M>]
) => Promise<FetchResponse<Operation<P, M> & Record<string | number, unknown>, {}, `${string}/${string}`>>;

/** The same client, typed so that options the description does not have fail to compile. */
export type CheckedHubClient = { [M in Method as Uppercase<M>]: CheckedMethod<M> } & Pick<HubClient, "use" | "eject">;
export type Schemas = components["schemas"];
export type { paths };

export interface HubCredentials {
  /** A person's access token (or a function giving the current one, for tokens that are renewed). */
  token?: string | (() => string | undefined);
  /** A server's API key (`orc_...`). */
  apiKey?: string;
}

/**
 * The hub's client typed as CheckedHubClient. The cast is the one place the
 * two views meet: the object is openapi-fetch's, only its options' typing is
 * narrower (openapi-fetch's inferred options are not assignable to it).
 */
export const checkedHubClient = (options: ClientOptions & HubCredentials = {}) => hubClient(options) as unknown as CheckedHubClient;

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
