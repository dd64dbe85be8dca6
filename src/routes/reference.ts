/**
 * The API described: the OpenAPI document, the interactive reference page
 * (Scalar's, from the Worker's own static assets: nothing loads from
 * elsewhere) and the list of problem codes every problem's `type` points to.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { HubEnv } from "../http/context";
import { PROBLEM_CODES, problemAnchor } from "../http/problem-codes";
import { apiDocument } from "../openapi/document";
import { documented } from "../openapi/operation";

const html = (title: string, body: string, head = "") =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
  `<title>${title}</title>${head}</head><body>${body}</body></html>`;

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
/** The list's meanings use `code` spans (backticks) and nothing else of markdown. */
const inline = (s: string) => escape(s).replace(/`([^`]+)`/g, "<code>$1</code>");

const PROBLEMS_CSS = `
body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}dt{font:600 14px ui-monospace,monospace;margin-top:1rem;scroll-margin-top:1rem}
dt:target{background:#fff8c5}dd{margin:.25rem 0 0 1.5rem}code{font-size:90%;background:#f6f8fa;padding:0 .25em;border-radius:4px}
`;
const PROBLEMS_STYLE = `<style>${PROBLEMS_CSS}</style>`;

/**
 * Like the dashboard's (web/public/_headers): nothing but the hub's own files, never framed. Scalar sets styles from
 * its script (elements and attributes), so its page allows inline styles; the problem codes page allows only its own
 * style block, by its hash, and no script at all.
 */
const PAGE_HEADERS = {
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};
const BASE_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const REFERENCE_HEADERS = {
  ...PAGE_HEADERS,
  "Content-Security-Policy": `${BASE_POLICY}; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'`,
};
let problemsHeaders: Promise<Record<string, string>> | undefined;
const problemsPageHeaders = () =>
  (problemsHeaders ??= crypto.subtle.digest("SHA-256", new TextEncoder().encode(PROBLEMS_CSS)).then((digest) => ({
    ...PAGE_HEADERS,
    "Content-Security-Policy": `${BASE_POLICY}; style-src 'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`,
  })));

const problemsPage = html(
  "Problem codes · Orchestratia hub",
  `<h1>Problem codes</h1><p>Every refusal is an RFC 9457 problem document (<code>application/problem+json</code>) whose <code>code</code> is one of these, and whose <code>type</code> links here. <a href="/docs">API reference</a></p><dl>` +
    Object.entries(PROBLEM_CODES)
      .map(([code, meaning]) => `<dt id="${problemAnchor(code)}">${code}</dt><dd>${inline(meaning)}</dd>`)
      .join("") +
    "</dl>",
  PROBLEMS_STYLE,
);

// Nothing that calls Scalar's own services: no hosted fonts, assistant, telemetry or developer toolbar.
const referenceConfig = JSON.stringify({
  url: "/api/v1/openapi.json",
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  documentDownloadType: "json",
});
const referencePage = html(
  "API reference · Orchestratia hub",
  `<script id="api-reference" data-configuration='${escape(referenceConfig)}'></script><script src="/reference/scalar.js"></script>`,
);

const htmlPage = { description: "An HTML page", contentType: "text/html", schema: z.string() };

/** The routes of the reference; they describe `app`, the whole hub, which is built before them. */
export function referenceRoutes(app: Hono<HubEnv>) {
  const routes = new Hono<HubEnv>();
  let document: ReturnType<typeof apiDocument> | undefined;

  routes.get(
    "/api/v1/openapi.json",
    documented({
      id: "getOpenApiDocument",
      tag: "Reference",
      summary: "The OpenAPI document",
      caller: "anyone",
      responses: { 200: { description: "The OpenAPI document", schema: z.looseObject({ openapi: z.string() }) } },
    }),
    (c) => {
      // Built once per isolate: the routes do not change while it lives.
      document ??= apiDocument(app);
      return c.json(document);
    },
  );

  routes.get(
    "/docs",
    documented({ id: "getReferencePage", tag: "Reference", summary: "API reference page", caller: "anyone", responses: { 200: htmlPage } }),
    (c) => c.html(referencePage, 200, REFERENCE_HEADERS),
  );

  routes.get(
    "/docs/problems",
    documented({ id: "getProblemCodes", tag: "Reference", summary: "Problem codes page", caller: "anyone", responses: { 200: htmlPage } }),
    async (c) => c.html(problemsPage, 200, await problemsPageHeaders()),
  );

  return routes;
}
