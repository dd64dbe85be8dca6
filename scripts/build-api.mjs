#!/usr/bin/env node
/**
 * Writes the hub's OpenAPI document (client/openapi.json) the way the Worker
 * builds it, from the app's routes and their zod schemas; checks it against
 * the OpenAPI 3.1 specification's schema; and generates the typed client's
 * types from it (client/schema.d.ts). The dashboard, the bench and the tests
 * call the hub through that client, so a change to the API that its
 * description does not follow breaks their type check.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { build } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS from "openapi-typescript";

const root = fileURLToPath(new URL("..", import.meta.url));
// Inside the project, so that the bundle's imports of packages resolve to node_modules; one per run, as
// checkouts may share node_modules.
const dir = `${root}node_modules/.cache/hub-api-${process.pid}`;
mkdirSync(dir, { recursive: true });
try {
  const bundle = `${dir}/document.mjs`;
  await build({
    stdin: {
      contents: `import { buildApp } from "./src/app"; import { apiDocument } from "./src/openapi/document"; export default apiDocument(buildApp());`,
      resolveDir: root,
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    outfile: bundle,
    logLevel: "warning",
    plugins: [
      {
        // The Durable Object base classes exist only inside workerd; describing the routes never constructs one.
        name: "workerd-modules",
        setup(b) {
          b.onResolve({ filter: /^cloudflare:/ }, (args) => ({ path: args.path, namespace: "workerd" }));
          // Packages written for workerd import its modules themselves: they are bundled, so those imports meet the stand-ins.
          b.onResolve({ filter: /^@cloudflare\/workers-oauth-provider$/ }, (args) => ({ path: createRequire(`${root}package.json`).resolve(args.path) }));
          b.onLoad({ filter: /.*/, namespace: "workerd" }, () => ({
            contents: "export class DurableObject {} export class WorkerEntrypoint {} export const env = {};",
            loader: "js",
          }));
        },
      },
    ],
  });
  const { default: document } = await import(pathToFileURL(bundle).href);

  const check = await new Validator().validate(document);
  if (!check.valid) {
    console.error("The API's description is not valid OpenAPI:", JSON.stringify(check.errors, null, 2).slice(0, 4000));
    process.exit(1);
  }
  const json = `${JSON.stringify(document, null, 2)}\n`;
  writeFileSync(`${root}client/openapi.json`, json);
  writeFileSync(`${root}client/schema.d.ts`, await openapiTS(document, { exportType: false }));
  const operations = Object.values(document.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  console.log(`API described: ${operations} operations, ${(json.length / 1024).toFixed(0)} KiB (client/openapi.json, client/schema.d.ts)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
