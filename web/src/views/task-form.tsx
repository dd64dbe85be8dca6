/**
 * The task form: every field a task is created with (API.md "Tasks"), its assignee (a session or a server) and its
 * typed dependencies. The same fields edit a task (task-edit.tsx) while they may still change.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { linkProps } from "../router";
import type { Task } from "../types";
import { AssigneeSelect, assignBodyOf, useAssignees } from "./assignee-select";
import { PrioritySelect, Problem } from "./controls";
import { DependencyPicker } from "./dependency-picker";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import { createBody, emptyDraft, parseStructuredSpec, REQUIREMENT_LISTS, type TaskDraft } from "./task-draft";
import { CriteriaField, RequirementsFields, SpecField, StructuredSpecField, TypeField, type Problems, type SetDraft } from "./task-fields";

/** The fields a refusal may name, most precise first where one lies under another. */
export const fieldsOf = (d: TaskDraft) => [
  "title",
  "type",
  "priority",
  "spec",
  "structured_spec",
  "acceptance_criteria",
  "requirements",
  "requirements.repo",
  "requirements.prefer_server",
  ...REQUIREMENT_LISTS.map((l) => `requirements.${l}`),
  "require_plan",
  "target_repo",
  "target_branch",
  "timeout_seconds",
  "dependencies",
  ...d.dependencies.map((_, i) => `dependencies.${i}`),
];

interface FieldsProps {
  draft: TaskDraft;
  set: SetDraft;
  problems: Problems;
  /** The tasks it may depend on. */
  tasks: Task[];
  servers: string[];
  /** Whether what is fixed once a task has left `pending` (type, spec, structured spec, requirements, dependencies) may change. */
  unfixed: boolean;
  /** A field shown beside the priority (the new task's assignee). */
  beside?: ComponentChildren;
}

/** The fields themselves, without a submit button. */
export function TaskFields({ draft, set, problems, tasks, servers, unfixed, beside }: FieldsProps) {
  const [structured, setStructured] = useState(draft.structuredSpec.trim() !== "");
  return (
    <>
      <label class="wide">
        Title
        <input name="title" required maxLength={500} value={draft.title} onInput={(e) => set({ title: e.currentTarget.value })} />
        <FieldProblem field="title" message={problems.title} />
      </label>
      {unfixed && <TypeField value={draft.type} onChange={(type) => set({ type })} problem={problems.type} />}
      <PrioritySelect name="priority" value={draft.priority} onChange={(priority) => set({ priority })} />
      {beside}
      <label class="switch">
        <input type="checkbox" name="require-plan" checked={draft.requirePlan} onChange={(e) => set({ requirePlan: e.currentTarget.checked })} />
        Requires a plan (approved by a person before the work starts)
      </label>
      {unfixed && <SpecField value={draft.spec} onChange={(spec) => set({ spec })} problem={problems.spec} />}
      <CriteriaField value={draft.acceptanceCriteria} onChange={(acceptanceCriteria) => set({ acceptanceCriteria })} problem={problems.acceptance_criteria} />
      {unfixed && <DependencyPicker tasks={tasks} value={draft.dependencies} onChange={(dependencies) => set({ dependencies })} problems={problems} />}
      {unfixed && <RequirementsFields draft={draft} set={set} problems={problems} servers={servers} />}
      {unfixed && (
        <details class="wide" open={structured} onToggle={(e) => setStructured(e.currentTarget.open)}>
          <summary>Structured spec</summary>
          {structured && (
            <StructuredSpecField value={draft.structuredSpec} onChange={(structuredSpec) => set({ structuredSpec })} problem={problems.structured_spec} />
          )}
        </details>
      )}
      {!structured && problems.structured_spec && <FieldProblem field="structured_spec" message={problems.structured_spec} />}
      <fieldset class="where wide">
        <legend>Where and how long</legend>
        <label>
          Target repository
          <input name="target-repo" maxLength={500} value={draft.targetRepo} onInput={(e) => set({ targetRepo: e.currentTarget.value })} />
          <FieldProblem field="target_repo" message={problems.target_repo} />
        </label>
        <label>
          Target branch
          <input name="target-branch" maxLength={500} value={draft.targetBranch} onInput={(e) => set({ targetBranch: e.currentTarget.value })} />
          <FieldProblem field="target_branch" message={problems.target_branch} />
        </label>
        <label>
          Time limit (minutes)
          <input name="timeout" type="number" min={1} step={1} value={draft.timeoutMinutes} onInput={(e) => set({ timeoutMinutes: e.currentTarget.value })} />
          <FieldProblem field="timeout_seconds" message={problems.timeout_seconds} />
        </label>
      </fieldset>
    </>
  );
}

/** Checks the structured spec's JSON before anything is sent: its problem, or the value to send. */
export function checkedStructuredSpec(draft: TaskDraft): { value: Record<string, unknown> | null } | { refusal: Refusal<string> } {
  const parsed = parseStructuredSpec(draft.structuredSpec);
  return "error" in parsed ? { refusal: { fields: { structured_spec: parsed.error }, other: null } } : parsed;
}

/** A new task; `onCreated` gets it once made (and assigned, when an assignee was chosen). */
export function NewTaskForm({ projectId, tasks, onCreated }: { projectId: string; tasks: Task[]; onCreated: (task: Task) => void }) {
  const [draft, setDraft] = useState<TaskDraft>(emptyDraft);
  const [assignee, setAssignee] = useState("");
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [unassigned, setUnassigned] = useState<{ task: Task; why: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const assignees = useAssignees(projectId);
  const set: SetDraft = (change) => setDraft((d) => ({ ...d, ...change }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    setUnassigned(null);
    const structured = checkedStructuredSpec(draft);
    if ("refusal" in structured) return setRefusal(structured.refusal);
    setBusy(true);
    try {
      let task: Task;
      try {
        task = await ok(hub.POST("/api/v1/tasks", { body: createBody(projectId, draft, structured.value) }));
      } catch (err) {
        return setRefusal(refusalOf(err, fieldsOf(draft)));
      }
      if (assignee) {
        try {
          task = await ok(hub.POST("/api/v1/tasks/{id}/assign", { params: { path: { id: task.id } }, body: assignBodyOf(assignee) }));
        } catch (err) {
          // The task exists: the form starts afresh, so that sending again makes no second one.
          setDraft(emptyDraft());
          return setUnassigned({ task, why: messageOf(err) });
        }
      }
      onCreated(task);
    } finally {
      setBusy(false);
    }
  };

  const servers = assignees?.servers ?? [];
  return (
    <form class="task-form" onSubmit={(e) => void submit(e)}>
      <TaskFields
        draft={draft}
        set={set}
        problems={refusal?.fields ?? {}}
        tasks={tasks}
        servers={servers.map((s) => s.name)}
        unfixed
        beside={
          <AssigneeSelect
            label="Assignee"
            value={assignee}
            onChange={setAssignee}
            none={assignees ? "nobody yet" : "loading…"}
            servers={servers.map((s) => ({ name: s.name, label: `${s.name} (${s.status})` }))}
            sessions={assignees?.sessions ?? []}
          />
        }
      />
      <div class="form-end wide">
        <button type="submit" disabled={busy}>
          Create task
        </button>
        <Problem message={refusal?.other} />
        {unassigned && (
          <p class="problem" role="alert">
            The task was created but not assigned: {unassigned.why}{" "}
            <a {...linkProps(`/projects/${projectId}/tasks/${unassigned.task.id}`)}>Open “{unassigned.task.title}”</a> to assign it.
          </p>
        )}
      </div>
    </form>
  );
}
