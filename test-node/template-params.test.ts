/** Templates' parameters: resolved against their declarations, filled into text and typed JSON, and templates checked whole. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dependencyCycle, fill, placeholdersIn, renderTasks, resolveParameters, templateProblems, type TemplateParameter } from "../src/domain/template-params";
import { chatWords, parseRunCommand } from "../src/integrations/chat/run-command";

const declared: TemplateParameter[] = [
  { name: "title", type: "string", required: true },
  { name: "count", type: "number", default: 3 },
  { name: "urgent", type: "boolean" },
];

describe("resolveParameters", () => {
  it("takes given values of the declared types, then defaults, and names each wrong one", () => {
    expect(resolveParameters(declared, { title: "x", urgent: true })).toEqual({ values: { title: "x", count: 3, urgent: true } });
    expect(resolveParameters(declared, {})).toEqual({ errors: [{ path: "parameters.title", message: "is required" }] });
    expect(resolveParameters(declared, { title: 1, count: "3", extra: 1 })).toEqual({
      errors: [
        { path: "parameters.extra", message: "is not a parameter of the template" },
        { path: "parameters.title", message: "must be a string" },
        { path: "parameters.count", message: "must be a number" },
      ],
    });
    expect(resolveParameters(declared, { title: "x", count: Number.NaN })).toEqual({ errors: [{ path: "parameters.count", message: "must be a number" }] });
  });

  it("reads a chat's text as the declared number or boolean, and refuses text that is neither", () => {
    expect(resolveParameters(declared, { title: "7", count: "12", urgent: "true" }, { fromText: true })).toEqual({
      values: { title: "7", count: 12, urgent: true },
    });
    expect(resolveParameters(declared, { title: "a", count: "", urgent: "yes" }, { fromText: true })).toEqual({
      errors: [
        { path: "parameters.count", message: "must be a number" },
        { path: "parameters.urgent", message: "must be a boolean" },
      ],
    });
  });
});

describe("fill", () => {
  it("puts each value's text in place of its placeholder, and nothing for one left unset", () => {
    expect(fill("Fix {{ title }} ×{{count}}{{urgent}}", { title: "login", count: 2 })).toBe("Fix login ×2");
  });

  it("keeps a lone placeholder's type inside JSON fields, and only there", () => {
    expect(fill({ n: "{{count}}", list: ["{{urgent}}", "{{count}} GB"] }, { count: 4, urgent: false }, true)).toEqual({ n: 4, list: [false, "4 GB"] });
    expect(fill("{{count}}", { count: 4 })).toBe("4");
  });

  it("leaves text without placeholders as it was, whatever it holds", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("{{")),
        (s) => fill(s, { title: "x" }) === s,
      ),
    );
  });
});

describe("templateProblems", () => {
  it("finds placeholders naming no parameter, repeated names and keys, stray and self dependencies, and cycles", () => {
    const problems = templateProblems(
      [declared[0]!, { name: "title", type: "number", default: "x" as never }],
      [
        { key: "a", title: "{{title}} {{missing}}", dependencies: [{ on: "a", dependency_type: "blocks" }] },
        { key: "a", title: "again" },
        { key: "b", title: "b", dependencies: [{ on: "nowhere", dependency_type: "blocks" }] },
      ],
    );
    expect(problems.map((p) => p.path)).toEqual([
      "parameters.1.name",
      "parameters.1.default",
      "tasks.1.key",
      "tasks.0.dependencies.0.on",
      "tasks.0.title",
      "tasks.2.dependencies.0.on",
    ]);
  });

  it("finds no cycle where every dependency points to an earlier task, and one once an edge points back", () => {
    const keys = ["k0", "k1", "k2", "k3", "k4"];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(4), fc.nat(4)), { maxLength: 12 }), (edges) => {
        const forward = edges.filter(([from, to]) => to < from);
        const tasks = keys.map((key, i) => ({
          key,
          title: key,
          dependencies: [...new Set(forward.filter(([from]) => from === i).map(([, to]) => to))].map((to) => ({
            on: keys[to]!,
            dependency_type: "blocks" as const,
          })),
        }));
        expect(dependencyCycle(tasks)).toBeNull();
        // k0 made to depend on a task that depends on it, directly or not, closes a cycle through both.
        const reaching = tasks.find((t) => t.key !== "k0" && dependsOn(tasks, t.key, "k0"));
        if (!reaching) return;
        tasks[0]!.dependencies.push({ on: reaching.key, dependency_type: "blocks" });
        const cycle = dependencyCycle(tasks);
        expect(cycle).toContain("k0");
        expect(cycle).toContain(reaching.key);
      }),
    );
    expect(
      dependencyCycle([
        { key: "a", title: "a", dependencies: [{ on: "c", dependency_type: "blocks" }] },
        { key: "b", title: "b", dependencies: [{ on: "a", dependency_type: "blocks" }] },
        { key: "c", title: "c", dependencies: [{ on: "b", dependency_type: "input", contract_key: "x" }] },
      ]),
    ).toEqual(["a", "c", "b", "a"]);
  });
});

/** Whether `from` depends on `to` through the tasks' dependencies. */
function dependsOn(tasks: { key: string; dependencies: { on: string }[] }[], from: string, to: string): boolean {
  const seen = new Set<string>();
  const walk = (key: string): boolean =>
    tasks.find((t) => t.key === key)!.dependencies.some((d) => d.on === to || (!seen.has(d.on) && (seen.add(d.on), walk(d.on))));
  return walk(from);
}

describe("renderTasks and placeholdersIn", () => {
  it("fills every field but keys and dependencies, and lists placeholders with where they are", () => {
    const [t] = renderTasks(
      [{ key: "{{title}}", title: "T {{title}}", acceptance_criteria: ["has {{count}}"], requirements: { n: "{{count}}" }, dependencies: [] }],
      { title: "x", count: 2 },
    );
    expect(t).toEqual({ key: "{{title}}", title: "T x", acceptance_criteria: ["has 2"], requirements: { n: 2 }, dependencies: [] });
    expect(placeholdersIn({ a: ["{{x}} {{ y }}"], b: "{{z}}" }, "tasks.0")).toEqual([
      { name: "x", path: "tasks.0.a.0" },
      { name: "y", path: "tasks.0.a.0" },
      { name: "z", path: "tasks.0.b" },
    ]);
  });
});

describe("a chat's /run", () => {
  it("splits quoted names and values, phones' curly quotes too", () => {
    expect(chatWords(`"Nightly triage" area=“login page” n=3 x='a b'`)).toEqual(["Nightly triage", "area=login page", "n=3", "x=a b"]);
    expect(parseRunCommand(`ops/release version=2.1`)).toEqual({ project: "ops", template: "release", parameters: { version: "2.1" } });
    expect(parseRunCommand("")).toHaveProperty("error");
    expect(parseRunCommand("release oops")).toHaveProperty("error");
  });
});
