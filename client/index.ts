/**
 * The hub's typed client: openapi-fetch over the types generated from the
 * hub's own OpenAPI document (`npm run build:api` writes client/schema.d.ts).
 * Paths, parameters, bodies and answers are checked against the description
 * at compile time, so callers break when the API and its description part.
 */
import createClient, { type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit, type ParseAs } from "openapi-fetch";
import type { components, paths } from "./schema";

type Method = "get" | "put" | "post" | "delete" | "patch";
type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, unknown> ? P : never }[keyof paths];
type Init<P extends keyof paths, M extends Method> = Exclude<MaybeOptionalInit<paths[P], M & keyof paths[P]>, undefined>;
type Operation<P extends keyof paths, M extends Method> = Extract<paths[P][M & keyof paths[P]], Record<string, unknown>>;
type Answer<P extends keyof paths, M extends Method, Options> = Promise<FetchResponse<Operation<P, M>, Options, `${string}/${string}`>>;

/**
 * openapi-fetch's own methods infer their options as a type parameter, which lets through a body field or
 * parameter the description lacks (openapi-ts/openapi-typescript#2329). These take the operation's own options
 * type, so TypeScript refuses such a field; `parseAs` picks the second signature, whose data is text, bytes or a stream.
 */
interface StrictMethod<M extends Method> {
  <P extends PathsWith<M>>(
    url: P,
    ...init: {} extends Init<P, M> ? [(Init<P, M> & { parseAs?: never })?] : [Init<P, M> & { parseAs?: never }]
  ): Answer<P, M, {}>;
  <P extends PathsWith<M>, As extends ParseAs>(url: P, init: Init<P, M> & { parseAs: As }): Answer<P, M, { parseAs: As }>;
}

export type HubClient = Omit<Client<paths>, Uppercase<Method>> & { [M in Method as Uppercase<M>]: StrictMethod<M> };
export type Schemas = components["schemas"];
export type { paths };

export interface HubCredentials {
  /** A person's access token (or a function giving the current one, for tokens that are renewed). */
  token?: string | (() => string | undefined);
  /** A server's API key (`orc_...`). */
  apiKey?: string;
}

/** The hub's answers name the database state they saw or made; sending it back makes reads see at least that. */
const BOOKMARK_HEADER = "X-D1-Bookmark";

/**
 * The newer of two D1 bookmarks: D1 documents them as sorting as strings from oldest to newest. Keeping the newer
 * rather than the last means an answer overtaken by a later one cannot move the client back.
 */
export const newerBookmark = (a: string | null, b: string | null): string | null => (a === null || (b !== null && b > a) ? b : a);

/**
 * A client of the hub. It remembers the newest `X-D1-Bookmark` the hub answered with and sends it on every request,
 * so that what it reads is never older than what it wrote or read before, wherever the hub reads from.
 */
export function hubClient(options: ClientOptions & HubCredentials = {}): HubClient {
  const { token, apiKey, ...rest } = options;
  const client = createClient<paths>(rest);
  let bookmark: string | null = null;
  client.use({
    onRequest({ request }) {
      const bearer = typeof token === "function" ? token() : token;
      if (bearer && !request.headers.has("Authorization")) request.headers.set("Authorization", `Bearer ${bearer}`);
      if (apiKey && !request.headers.has("X-API-Key")) request.headers.set("X-API-Key", apiKey);
      if (bookmark && !request.headers.has(BOOKMARK_HEADER)) request.headers.set(BOOKMARK_HEADER, bookmark);
      return request;
    },
    onResponse({ response }) {
      bookmark = newerBookmark(bookmark, response.headers.get(BOOKMARK_HEADER) || null);
      return undefined;
    },
  });
  return client;
}
