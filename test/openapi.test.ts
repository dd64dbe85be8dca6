/** The API's description: complete, valid OpenAPI 3.1, and its problem codes explained where their `type` points. */
import generated from "../client/openapi.json";
import { describe, expect, it } from "vitest";
import { buildApp } from "../src/app";
import { PROBLEM_CODES, problemAnchor } from "../src/http/problem-codes";
import { appRoutes } from "../src/openapi/document";
import { BASE, call, expectProblem } from "./helpers";

describe("the OpenAPI document", () => {
  it("describes every route the app answers, each with a summary and a unique operation id", async () => {
    const routes = appRoutes(buildApp());
    expect(routes.length).toBeGreaterThan(80);
    const undocumented = routes.filter((r) => !r.operation).map((r) => `${r.key.method.toUpperCase()} ${r.key.path}`);
    expect(undocumented).toEqual([]);
    for (const { operation } of routes) expect(operation!.summary.trim(), operation!.id).not.toBe("");
    const ids = routes.map((r) => r.operation!.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);

    const doc = (await call("/api/v1/openapi.json")).json;
    const documented = Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.key.method} ${r.key.path}`).sort());
  });

  it("is the document the typed client was generated from (test-node/ validates that one against the OpenAPI 3.1 schema)", async () => {
    const reply = await call("/api/v1/openapi.json");
    expect(reply.status).toBe(200);
    expect(reply.json.openapi).toBe("3.1.0");
    expect(reply.json).toEqual(generated);
  });

  it("states every problem code in the Problem schema", async () => {
    const doc = (await call("/api/v1/openapi.json")).json;
    expect(doc.components.schemas.Problem.properties.code.enum.sort()).toEqual(Object.keys(PROBLEM_CODES).sort());
  });
});

describe("problem types", () => {
  it("resolve to the code's explanation in the list of problem codes", async () => {
    const refused = await call("/api/v1/projects", { body: { name: 42 } });
    expectProblem(refused, 401, "UNAUTHORIZED");
    const target = new URL(refused.json.type, BASE + "/api/v1/projects");
    expect(target.pathname).toBe("/docs/problems");
    expect(target.hash).toBe("#unauthorized");
    const list = await call(target.pathname);
    expect(list.status).toBe(200);
    expect(list.headers.get("Content-Type")).toMatch(/^text\/html/);
    for (const [code, meaning] of Object.entries(PROBLEM_CODES)) {
      expect(list.text).toContain(`id="${problemAnchor(code)}">${code}</dt>`);
      expect(list.text).toContain(meaning.split("`")[0]!.replaceAll("'", "&#39;").slice(0, 20));
    }
  });
});

describe("the reference page", () => {
  it("loads Scalar from the hub's own assets and reads the document from the hub", async () => {
    const page = await call("/docs");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script src="/reference/scalar.js"></script>');
    expect(page.text).toContain("/api/v1/openapi.json");
    expect(page.text).not.toMatch(/https?:\/\//);
  });
});
