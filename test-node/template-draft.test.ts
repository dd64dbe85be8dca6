/** The template editor's draft and the body it saves as, both ways; the run form's typed values as parameters. */
import { describe, expect, it } from "vitest";
import { bodyOf, draftOf, emptyTemplate, fieldPaths, freshKey, parameterValues, typedDefaults, type TemplateBody } from "../web/src/template-draft";

const saved: TemplateBody = {
  name: "Fix an issue",
  description: "From a labelled issue",
  parameters: [
    { name: "issue", type: "string", required: true },
    { name: "attempts", type: "number", default: 2 },
    { name: "careful", type: "boolean", default: false },
  ],
  tasks: [
    { key: "plan", title: "Plan {{issue}}", type: "feature", priority: "high", requirements: { languages: ["python"] }, target_repo: "acme/api" },
    {
      key: "ship",
      title: "Ship {{issue}}",
      type: "bugfix",
      priority: "normal",
      acceptance_criteria: ["closed", "tested"],
      require_plan: true,
      dependencies: [{ on: "plan", dependency_type: "input", contract_key: "fix_plan" }],
    },
  ],
};

describe("the template draft", () => {
  it("opens a saved template and saves it as it was, keeping the fields the form does not show", () => {
    const made = bodyOf(draftOf(saved));
    expect(made).toEqual({ body: saved });
  });

  it("types defaults by the parameter's type, and sends what does not parse as typed for the hub to name", () => {
    const draft = draftOf(saved);
    draft.parameters[1]!.default = "3.5";
    draft.parameters[2]!.default = "true";
    draft.parameters.push({ name: "n", type: "number", required: false, default: "many", description: "" });
    const made = bodyOf(draft);
    if (!("body" in made)) throw new Error("refused");
    expect(made.body.parameters.map((p) => p.default)).toEqual([undefined, 3.5, true, "many"]);
  });

  it("refuses requirements that are not a JSON object, naming the task's field", () => {
    const draft = draftOf(saved);
    draft.tasks[1]!.requirements = "[1, 2]";
    expect(bodyOf(draft)).toEqual({ errors: [{ path: "tasks.1.requirements", message: expect.stringContaining("JSON object") }] });
  });

  it("knows the path of every field, so a refusal lands beside it", () => {
    const paths = fieldPaths(draftOf(saved));
    expect(paths).toContain("tasks.1.dependencies.0.on");
    expect(paths).toContain("tasks.1.dependencies.0.contract_key");
    expect(paths).toContain("parameters.2.default");
    expect(paths).not.toContain("tasks.0.dependencies.0.on");
  });

  it("gives a new task a key no other task has", () => {
    const draft = emptyTemplate();
    draft.tasks.push({ ...draft.tasks[0]!, key: "task-2" });
    expect(freshKey(draft.tasks)).toBe("task-3");
  });
});

describe("the run form's values", () => {
  it("starts from the defaults and sends typed values, leaving out empty ones", () => {
    const typed = typedDefaults(saved.parameters);
    expect(typed).toEqual({ issue: "", attempts: "2", careful: false });
    expect(parameterValues(saved.parameters, typed)).toEqual({ attempts: 2, careful: false });
    expect(parameterValues(saved.parameters, { ...typed, issue: "the login bug", careful: true })).toEqual({
      issue: "the login bug",
      attempts: 2,
      careful: true,
    });
  });
});
