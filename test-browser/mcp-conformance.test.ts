/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against the hub under `wrangler dev`: every server
 * scenario the package lists is classified in mcp-conformance-scenarios.ts, and each one that applies runs as an agent
 * (API key) and as a person (personal access token) through a loopback proxy that adds the credentials, which the CLI
 * cannot send. A run passes when exactly its expected failures fail. The runs are written to test-results/ for
 * `npm run conformance`, which renders docs/CONFORMANCE.md from them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONFORMANCE_VERSION, listedServerScenarios, revisionServerScenarios, runScenario, type Check } from "./conformance-cli";
import { credentialProxy, type CredentialProxy } from "./credential-proxy";
import { adminToken, hub, hubAs, ok, registerAgent } from "./driver";
import { isApplicable, isSkipped, REVISIONS, SCENARIOS, SERVED_REVISIONS, type Revision } from "./mcp-conformance-scenarios";

const RESULTS = path.resolve(import.meta.dirname, "../test-results/mcp-conformance.json");

const CALLERS = ["agent", "person"] as const;
type Caller = (typeof CALLERS)[number];

interface Run {
  scenario: string;
  revision: Revision;
  caller: Caller;
  passed: number;
  warned: number;
  failed: number;
  /** Checks that failed and were expected to (a known hub defect, or a check that needs a reference fixture), each with why. */
  expectedFailures: Record<string, string>;
  /** Checks that failed unexpectedly, or were expected to fail and did not: the run's verdict is `pass` only without any. */
  surprises: string[];
  result: "pass" | "fail";
  ms: number;
}
const runs: Run[] = [];

let proxies: Record<Caller, CredentialProxy>;
beforeAll(async () => {
  const admin = await adminToken();
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Conformance" } }), 201);
  const agent = await registerAgent(admin, project.id);
  const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/auth/me/tokens", { body: { name: "MCP conformance", scope: "write" } }), 201);
  proxies = {
    agent: await credentialProxy(hub().url, { "X-API-Key": agent.apiKey }),
    person: await credentialProxy(hub().url, { Authorization: `Bearer ${token}` }),
  };
});

afterAll(async () => {
  await Promise.all(Object.values(proxies ?? {}).map((p) => p.close()));
  const skipped = SCENARIOS.filter(isSkipped).map((c) => ({ scenario: c.scenario, revision: c.revision, why: c.skip }));
  const notRun = SCENARIOS.filter((c) => isApplicable(c) && !SERVED_REVISIONS.includes(c.revision)).map(({ scenario, revision }) => ({
    scenario,
    revision,
    why: `the hub does not serve ${revision} yet`,
  }));
  mkdirSync(path.dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    JSON.stringify(
      { package: "@modelcontextprotocol/conformance", version: CONFORMANCE_VERSION, ranAt: new Date().toISOString(), runs, skipped, notRun },
      null,
      2,
    ),
  );
});

describe("the MCP conformance package's server scenarios", () => {
  it("are each classified once per revision: the table names exactly what the package lists", async () => {
    const listed = await listedServerScenarios();
    const perRevision = Object.fromEntries(await Promise.all(REVISIONS.map(async (r) => [r, await revisionServerScenarios(r)] as const)));
    // Scenarios of no revision's requirements (extensions added since) are classified with the newest revision.
    const unplaced = listed.filter((s) => !REVISIONS.some((r) => perRevision[r]!.includes(s)));
    const newest = REVISIONS[REVISIONS.length - 1]!;
    for (const revision of REVISIONS) {
      const wanted = [...perRevision[revision]!, ...(revision === newest ? unplaced : [])];
      const table = SCENARIOS.filter((c) => c.revision === revision).map((c) => c.scenario);
      expect(new Set(table).size, `a scenario is classified twice for ${revision}`).toBe(table.length);
      expect([...table].sort(), `mcp-conformance-scenarios.ts for ${revision}`).toEqual([...new Set(wanted)].sort());
    }
    expect([...new Set(SCENARIOS.map((c) => c.scenario))].sort()).toEqual([...listed].sort());
  });

  for (const revision of REVISIONS.filter((r) => !SERVED_REVISIONS.includes(r)))
    it(`at ${revision}: not answered by the hub yet, so its applicable scenarios are listed but not run`, async () => {
      const res = await fetch(`${proxies.agent.url}/mcp`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": revision,
          "Mcp-Method": "server/discover",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: {} }),
      });
      const body = await res.text();
      expect(
        res.ok && body.includes('"supportedVersions"'),
        `the hub answers server/discover at ${revision}: add it to SERVED_REVISIONS in mcp-conformance-scenarios.ts (${body.slice(0, 200)})`,
      ).toBe(false);
    });

  for (const revision of SERVED_REVISIONS)
    for (const c of SCENARIOS.filter(isApplicable).filter((c) => c.revision === revision))
      for (const caller of CALLERS)
        it(`${c.scenario} at ${revision}, as ${caller === "agent" ? "an agent" : "a person"}`, async () => {
          const started = Date.now();
          const checks = await runScenario(`${proxies[caller].url}/mcp`, c.scenario, revision);
          const count = (status: Check["status"]) => checks.filter((k) => k.status === status).length;
          const failing = [...new Set(checks.filter((k) => k.status === "FAILURE").map((k) => k.id))].sort();
          const expected = Object.keys(c.expectedFailures ?? {}).sort();
          const surprises = [
            ...failing.filter((id) => !expected.includes(id)),
            ...expected.filter((id) => !failing.includes(id)).map((id) => `${id} (passed)`),
          ];
          runs.push({
            scenario: c.scenario,
            revision,
            caller,
            passed: count("SUCCESS"),
            warned: count("WARNING"),
            failed: count("FAILURE"),
            expectedFailures: Object.fromEntries(failing.filter((id) => expected.includes(id)).map((id) => [id, c.expectedFailures![id]!])),
            surprises,
            result: surprises.length ? "fail" : "pass",
            ms: Date.now() - started,
          });
          const said = checks.filter((k) => k.status === "FAILURE").map((k) => `${k.id}: ${k.errorMessage ?? k.description ?? ""}`);
          expect(checks.length, "the scenario ran no checks").toBeGreaterThan(0);
          expect(failing, said.join("\n")).toEqual(expected);
        });
});
