/** A template's graph with its parameters filled in, each task checked as a create would check it, ready for the room. */
import { renderTasks, type ParameterValue, type TemplateTask } from "../../domain/template-params";
import { type FieldError, zodFieldErrors } from "../../protocol/field-errors";
import { checkTaskProtocol } from "../../protocol/hub-api";
import type { DEPENDENCY_TYPES } from "../../protocol/orchestratia-v1";
import { templateTaskSchema } from "../../protocol/templates";
import { newTask, type NewTask } from "../commands";

/** A rendered task as the room creates it, with its dependencies still by key. */
export interface GraphTask {
  key: string;
  task: NewTask;
  dependencies: { on: string; dependency_type: (typeof DEPENDENCY_TYPES)[number]; contract_key: string | null }[];
}

/**
 * The template's tasks with `values` filled in, each checked as a create would check it; errors name
 * `tasks.<index>.<field>` and what the filled-in value broke.
 */
export function graphOf(tasks: readonly TemplateTask[], values: Record<string, ParameterValue>): { graph: GraphTask[] } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const graph: GraphTask[] = [];
  renderTasks(tasks, values).forEach((rendered, i) => {
    const parsed = templateTaskSchema.safeParse(rendered);
    if (!parsed.success) return void errors.push(...zodFieldErrors(parsed.error, `tasks.${i}`));
    const t = parsed.data;
    const check = checkTaskProtocol({ requirements: t.requirements ?? null });
    if (!check.ok) return void errors.push(...check.errors.map((e) => ({ ...e, path: `tasks.${i}.${e.path}` })));
    graph.push({
      key: t.key,
      task: newTask({
        title: t.title,
        spec: t.spec ?? "",
        type: t.type ?? "feature",
        priority: t.priority ?? "normal",
        targetRepo: t.target_repo ?? null,
        targetBranch: t.target_branch ?? null,
        acceptanceCriteria: t.acceptance_criteria ?? [],
        requirements: t.requirements ?? null,
        requirePlan: t.require_plan ?? false,
        timeoutSeconds: t.timeout_seconds ?? null,
        warnings: check.warnings,
      }),
      dependencies: (t.dependencies ?? []).map((d) => ({ on: d.on, dependency_type: d.dependency_type, contract_key: d.contract_key ?? null })),
    });
  });
  return errors.length ? { errors } : { graph };
}
