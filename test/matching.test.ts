/** Capability matching exactly as seed §5, rule by rule. */
import { describe, expect, it } from "vitest";
import { planAssignments } from "../src/domain/cascade";
import { effectiveCapabilities } from "../src/domain/capability-union";
import { rankServers, rolesOf, scoreServer, unmetCustomRequirement, type Candidate } from "../src/domain/matching";
import { requirementsSchema } from "../src/protocol/orchestratia-v1";

const devBackend: Candidate = {
  id: "uuid-of-dev-backend",
  name: "dev-backend",
  capabilities: {
    $schema: "orchestratia/capabilities/v1",
    repos: { "api-gateway": { path: "/home/dev/api-gateway", languages: ["rust"], tools: ["cargo"] } },
    languages: ["rust", "typescript", "python"],
    tools: ["docker", "git", "cargo", "npm"],
    environments: ["linux"],
    tags: ["backend", "systems"],
    max_concurrent_tasks: 2,
  },
  repos: {},
  os: "linux",
  online: true,
  activeTasks: 0,
};
const devDesktop: Candidate = {
  id: "uuid-of-dev-desktop",
  name: "dev-desktop",
  capabilities: { repos: { "web-dashboard": { path: "/home/dev/web" } }, languages: ["typescript"], environments: ["macos"] },
  repos: {},
  os: "darwin",
  online: false,
  activeTasks: 0,
};
const seedTask = { repo: "api-gateway", languages: ["rust"], tools: ["cargo", "docker"], environments: ["linux"], prefer_server: "dev-backend" };

describe("the seed's worked example", () => {
  it("scores dev-backend 475 with exactly the seven reasons, and disqualifies dev-desktop", () => {
    const ranked = rankServers(seedTask, [devDesktop, devBackend]).map(({ active_tasks: _, ...m }) => m);
    expect({ servers: ranked, total: ranked.length }).toEqual({
      servers: [
        {
          server_id: "uuid-of-dev-backend",
          server_name: "dev-backend",
          score: 475,
          status: "online",
          reasons: [
            "repo match: api-gateway (+100)",
            "language match: rust (+50)",
            "environment match: linux (+30)",
            "tools match: cargo, docker (+20)",
            "preferred server (+200)",
            "online (+25)",
            "has capacity (+50)",
          ],
        },
        { server_id: "uuid-of-dev-desktop", server_name: "dev-desktop", score: -1, status: "offline", reasons: ["missing repo: api-gateway (disqualified)"] },
      ],
      total: 2,
    });
  });
});

const score = (req: Parameters<typeof scoreServer>[0], c: Partial<Candidate> = {}) => scoreServer(req, { ...devBackend, ...c });
const bare = { online: false, capabilities: { max_concurrent_tasks: 1 } } as const;

describe("hard requirements", () => {
  it("repo: +100 when in capabilities.repos or the registered repos, else disqualified", () => {
    expect(score({ repo: "api-gateway" }, { ...bare, capabilities: { repos: { web: {} } } })).toMatchObject({ score: -1, reasons: ["missing repo: api-gateway (disqualified)"] });
    expect(score({ repo: "api-gateway" }, bare)).toMatchObject({ score: -1, reasons: ["declares no repos; the task needs api-gateway (disqualified)"] });
    expect(score({ repo: "api-gateway" }, { ...bare, capabilities: { repos: { "api-gateway": {} } } })).toMatchObject({ score: 150, reasons: ["repo match: api-gateway (+100)", "has capacity (+50)"] });
    expect(score({ repo: "api-gateway" }, { ...bare, repos: { "api-gateway": "/srv/gw" } }).score).toBe(150);
    expect(score({ repo: "api-gateway" }, { ...bare, repos: ["api-gateway"] }).score).toBe(150);
  });

  it("languages: +50 once when every language is known, else disqualified naming the missing ones", () => {
    expect(score({ languages: ["rust", "python"] }, { online: false }).reasons[0]).toBe("language match: rust, python (+50)");
    expect(score({ languages: ["rust", "python"] }, { online: false }).score).toBe(100);
    expect(score({ languages: ["rust", "go", "zig"] })).toMatchObject({ score: -1, reasons: ["missing languages: go, zig (disqualified)"] });
    // A repo's own languages count for a task on that repo.
    expect(score({ repo: "api-gateway", languages: ["rust"] }, { capabilities: { repos: { "api-gateway": { languages: ["rust"] } } } }).score).toBeGreaterThan(0);
  });

  it("environments: +30 when at least one matches, else disqualified; the registered os counts", () => {
    expect(score({ environments: ["windows", "linux"] }, { online: false })).toMatchObject({ score: 80, reasons: ["environment match: linux (+30)", "has capacity (+50)"] });
    expect(score({ environments: ["windows"] })).toMatchObject({ score: -1, reasons: ["missing environment: windows (disqualified)"] });
    expect(score({ environments: ["macos"] }, { capabilities: {}, os: "darwin", online: false }).score).toBe(80);
  });
});

describe("the hub's hard requirements: role and capabilities", () => {
  it("an agent's roles come from capabilities.role or capabilities.roles, \"worker\" when neither is given", () => {
    const table: [Candidate["capabilities"], string[]][] = [
      [null, ["worker"]],
      [{}, ["worker"]],
      [{ role: "reviewer" }, ["reviewer"]],
      [{ roles: ["planner", "reviewer"] }, ["planner", "reviewer"]],
      [{ role: "reviewer", roles: ["reviewer", "worker"] }, ["reviewer", "worker"]],
    ];
    for (const [caps, roles] of table) expect(rolesOf(caps), JSON.stringify(caps)).toEqual(roles);
  });

  it("role: only a server with that role (case-insensitive) qualifies", () => {
    expect(score({ role: "reviewer" })).toMatchObject({ score: -1, reasons: ["missing role: reviewer (disqualified)"] });
    expect(score({ role: "worker" }, { online: false }).score).toBe(50);
    expect(score({ role: "Reviewer" }, { online: false, capabilities: { roles: ["planner", "reviewer"] } }).score).toBe(50);
    expect(score({ role: "worker" }, { capabilities: { role: "reviewer" } }).score).toBe(-1);
  });

  it("capabilities: each must be among languages, tools, tags and environments (case-insensitive)", () => {
    const table: [string[], number | string][] = [
      [["rust", "Docker", "backend", "linux"], 50],
      [["cobol"], "missing capabilities: cobol (disqualified)"],
      [["rust", "cobol", "fortran"], "missing capabilities: cobol, fortran (disqualified)"],
      [["cargo"], 50],
    ];
    for (const [wanted, expected] of table) {
      const m = score({ capabilities: wanted }, { online: false });
      if (typeof expected === "number") expect(m.score, wanted.join()).toBe(expected);
      else expect(m, wanted.join()).toMatchObject({ score: -1, reasons: [expected] });
    }
  });
});

describe("requirement fields the hub does not know", () => {
  const caps = { cpu_cores: 32, gpu: "a100", gpus: ["a100", "h100"], arm64: true, zones: ["eu", "us"] };
  it("are matched against the server's same-named capability", () => {
    const table: [string, unknown, string | null][] = [
      ["cpu_cores", 16, null],
      ["cpu_cores", 32, null],
      ["cpu_cores", 64, "insufficient cpu_cores: 32 < 64"],
      ["memory_gb", 64, "missing memory_gb: 64"],
      ["gpu", "A100", null],
      ["gpu", "h100", "missing gpu: h100"],
      ["gpus", "h100", null],
      ["arm64", true, null],
      ["arm64", false, "missing arm64: false"],
      ["zones", ["us", "eu"], null],
      ["zones", ["us", "ap"], "missing zones: ap"],
      ["gpu", 1, "missing gpu: 1"],
      ["gpu", { model: "a100" }, "cannot match gpu"],
    ];
    for (const [field, wanted, unmet] of table) expect(unmetCustomRequirement(field, wanted, caps), `${field}=${JSON.stringify(wanted)}`).toBe(unmet);
  });

  it("disqualify a server that lacks them, with the seed's style of reason", () => {
    expect(score({ cpu_cores: 64 } as never)).toMatchObject({ score: -1, reasons: ["missing cpu_cores: 64 (disqualified)"] });
    expect(score({ cpu_cores: 64 } as never, { online: false, capabilities: { cpu_cores: 128 } as never }).score).toBe(50);
    // $schema is the document's version, not a requirement.
    expect(score({ $schema: "orchestratia/requirements/v1" }, { online: false }).score).toBe(50);
  });

  it("are refused when they hold a value that cannot be compared, naming the field", () => {
    const table: [Record<string, unknown>, string[]][] = [
      [{ cpu_cores: 64 }, []],
      [{ zones: ["eu", 1, true] }, []],
      [{ gpu: { model: "a100" } }, ["gpu"]],
      [{ gpus: [{ model: "a100" }] }, ["gpus"]],
      [{ affinity: null }, ["affinity"]],
      [{ $schema: "orchestratia/requirements/v1", role: "reviewer", capabilities: ["cobol"] }, []],
    ];
    for (const [req, paths] of table) {
      const parsed = requirementsSchema.safeParse(req);
      expect(parsed.success ? [] : parsed.error.issues.map((i) => i.path.join(".")), JSON.stringify(req)).toEqual(paths);
    }
  });
});

describe("soft requirements", () => {
  it("tools: +10 for each match, never disqualifying", () => {
    expect(score({ tools: ["cargo", "docker", "bazel"] }, { online: false })).toMatchObject({ score: 70, reasons: ["tools match: cargo, docker (+20)", "has capacity (+50)"] });
    expect(score({ tools: ["bazel"] }, { online: false }).score).toBe(50);
  });

  it("tags: +5 for each match", () => {
    expect(score({ tags: ["backend", "systems", "gpu"] }, { online: false })).toMatchObject({ score: 60, reasons: ["tags match: backend, systems (+10)", "has capacity (+50)"] });
  });

  it("prefer_server: +200 for the named server only", () => {
    expect(score({ prefer_server: "dev-backend" }, { online: false }).score).toBe(250);
    expect(score({ prefer_server: "someone-else" }, { online: false }).score).toBe(50);
  });

  it("online: +25", () => {
    expect(score({}, { online: true }).reasons).toEqual(["online (+25)", "has capacity (+50)"]);
    expect(score({}, { online: false }).score).toBe(50);
  });
});

describe("disqualification", () => {
  it("at capacity: active tasks at max_concurrent_tasks (default 1)", () => {
    expect(score({}, { activeTasks: 2 })).toMatchObject({ score: -1, reasons: ["at capacity: 2/2 tasks (disqualified)"] });
    expect(score({}, { activeTasks: 1 }).reasons).toContain("has capacity (+50)");
    expect(score({}, { capabilities: {}, activeTasks: 1 })).toMatchObject({ score: -1, reasons: ["at capacity: 1/1 tasks (disqualified)"] });
  });

  it("a server that declares none of what is missing says so, and what the task needs", () => {
    const none = { capabilities: null, os: null };
    expect(score({ languages: ["typescript", "rust"] }, none).reasons).toEqual(["declares no languages; the task needs typescript, rust (disqualified)"]);
    expect(score({ repo: "api" }, none).reasons).toEqual(["declares no repos; the task needs api (disqualified)"]);
    expect(score({ environments: ["linux"] }, none).reasons).toEqual(["declares no environments; the task needs linux (disqualified)"]);
    expect(score({ capabilities: ["gpu"] }, none).reasons).toEqual(["declares no capabilities (languages, tools, tags, environments); the task needs gpu (disqualified)"]);
    // Declaring some, but not the needed one, keeps the seed's reason; the registered os counts as an environment.
    expect(score({ languages: ["cobol"] }, { capabilities: { languages: ["rust"] } }).reasons).toEqual(["missing languages: cobol (disqualified)"]);
    expect(score({ environments: ["windows"] }, { capabilities: null, os: "linux" }).reasons).toEqual(["missing environment: windows (disqualified)"]);
  });
});

describe("a server with no capabilities at all (a daemon's first day)", () => {
  it("takes a task that requires nothing, one at a time", () => {
    expect(score({}, { capabilities: null })).toMatchObject({ score: 75, reasons: ["online (+25)", "has capacity (+50)"] });
    expect(score({}, { capabilities: null, activeTasks: 1 })).toMatchObject({ score: -1, reasons: ["at capacity: 1/1 tasks (disqualified)"] });
    // Soft requirements never disqualify it either.
    expect(score({ tools: ["npm"], tags: ["web"] }, { capabilities: null, online: false }).score).toBe(50);
  });
});

describe("capabilities declared in the hub, joined with the daemon's", () => {
  it("joins lists without case duplicates, merges repos, and lets the declared single values win", () => {
    const reported = { languages: ["Rust"], tools: ["cargo"], max_concurrent_tasks: 1, repos: { api: { path: "/srv/api", languages: ["rust"] } } };
    const declared = { languages: ["rust", "typescript"], tags: ["web"], max_concurrent_tasks: 3, repos: { api: { tools: ["cargo"] }, web: {} } };
    expect(effectiveCapabilities(reported, declared)).toEqual({
      languages: ["Rust", "typescript"],
      tools: ["cargo"],
      tags: ["web"],
      max_concurrent_tasks: 3,
      repos: { api: { path: "/srv/api", languages: ["rust"], tools: ["cargo"] }, web: {} },
    });
  });

  it("is either side alone when the other is missing, and null when both are", () => {
    expect(effectiveCapabilities(null, { languages: ["go"] })).toEqual({ languages: ["go"] });
    expect(effectiveCapabilities({ languages: ["go"] }, null)).toEqual({ languages: ["go"] });
    expect(effectiveCapabilities(null, null)).toBeNull();
    expect(effectiveCapabilities({}, undefined)).toEqual({});
  });
});

describe("ranking and planning", () => {
  it("breaks ties by fewer active tasks, then by name", () => {
    const twin = (name: string, activeTasks: number): Candidate => ({ ...devBackend, id: name, name, activeTasks, capabilities: { max_concurrent_tasks: 5 } });
    const ranked = rankServers({}, [twin("b", 1), twin("c", 0), twin("a", 1), { ...devBackend, activeTasks: 2 }]);
    expect(ranked.map((m) => m.server_name)).toEqual(["c", "a", "b", "dev-backend"]);
  });

  it("plans assignments in turn, counting capacity as it goes", () => {
    const one = (name: string): Candidate => ({ ...devBackend, id: name, name, capabilities: { max_concurrent_tasks: 1, languages: ["rust"] } });
    const plan = planAssignments(
      ["t1", "t2", "t3"].map((id) => ({ id, requirements: { languages: ["rust"] }, requirePlan: false })),
      [one("x"), one("y")],
    );
    expect(plan.map((p) => [p.taskId, p.match.server_name])).toEqual([["t1", "x"], ["t2", "y"]]);
  });
});
