/**
 * Hono answers an unmatched method with its not-found handler; this tells a
 * wrong method (405, with Allow) from a path that does not exist (404) by
 * matching the path against every route the app declares.
 */
import type { Hono } from "hono";
import { TrieRouter } from "hono/router/trie-router";

export function allowedMethodsFinder(app: Hono<any>) {
  let router: TrieRouter<string> | undefined;
  return (path: string): string[] => {
    if (!router) {
      router = new TrieRouter<string>();
      for (const route of app.routes) {
        if (route.method !== "ALL") router.add("GET", route.path, route.method);
      }
    }
    const [matches] = router.match("GET", path);
    return [...new Set(matches.map(([method]) => method))];
  };
}
