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

const PROBLEMS_STYLE = `<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.5rem}dt{font:600 14px ui-monospace,monospace;margin-top:1rem;scroll-margin-top:1rem}
dt:target{background:#fff8c5}dd{margin:.25rem 0 0 1.5rem}code{font-size:90%;background:#f6f8fa;padding:0 .25em;border-radius:4px}
</style>`;

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
    (c) => c.html(referencePage),
  );

  routes.get(
    "/docs/problems",
    documented({ id: "getProblemCodes", tag: "Reference", summary: "Problem codes page", caller: "anyone", responses: { 200: htmlPage } }),
    (c) => c.html(problemsPage),
  );

  return routes;
}
