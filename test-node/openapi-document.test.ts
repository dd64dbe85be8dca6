/**
 * The hub's OpenAPI document (as `npm run build:api` wrote it from the app,
 * and as the Worker serves it: test/openapi.test.ts holds the two equal)
 * checked against the OpenAPI 3.1 specification's own schema. Runs in Node:
 * the validator compiles schemas to code, which workerd does not allow.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const document = JSON.parse(readFileSync(join(import.meta.dirname, "../client/openapi.json"), "utf8"));

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("fails the validator when broken, so the check above can fail", async () => {
    const broken = structuredClone(document);
    const [path] = Object.keys(broken.paths);
    broken.paths[path!].get = { responses: "none" };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it("gives every operation an id, a tag, a summary and the problem responses", () => {
    for (const [path, operations] of Object.entries<Record<string, any>>(document.paths)) {
      for (const [method, op] of Object.entries<any>(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(op.tags, where).toHaveLength(1);
        expect(op.summary?.trim(), where).toBeTruthy();
        expect(op.responses["4XX"].content["application/problem+json"].schema.$ref, where).toBe("#/components/schemas/Problem");
      }
    }
  });
});
