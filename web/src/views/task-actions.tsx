/** What a person may do to a task in its status: approve it, assign it, review its plan, answer its questions, retry or cancel it. */
import { useState } from "preact/hooks";
import type { VNode } from "preact";
import { hub, ok } from "../api";
import { useCanWrite } from "../me";
import { isTask, type Intervention, type Match, type Task, type TaskStatus } from "../types";
import { AutoAssign } from "./auto-assign";
import { AssigneeSelect, assignBodyOf, type Assignees } from "./assignee-select";
import { ApproveButton, awaitsApproval, useAction } from "./controls";

/** Statuses a task can be assigned (again) from. */
export const ASSIGNABLE: TaskStatus[] = ["pending", "assigned", "planning"];
export const FINISHED: TaskStatus[] = ["done", "failed", "cancelled"];

/** The task as the hub has it now. */
export const readTask = async (id: string) => {
  const t = await ok(hub.GET("/api/v1/tasks/{id}", { params: { path: { id } } }));
  if (!isTask(t)) throw new Error("The hub answered a task-format response");
  return t;
};

interface Props {
  task: Task;
  interventions: Intervention[];
  matches: Match[] | null;
  assignees: Assignees | null;
  onChanged: (t: Task) => void;
}

/** The task's actions, or nothing at all when none applies (a done task shows no empty box). */
export function Actions({ task, interventions, matches, assignees, onChanged }: Props) {
  const canWrite = useCanWrite();
  const { run, busy, problem } = useAction();
  const [assignee, setAssignee] = useState("");
  const [feedback, setFeedback] = useState("");
  const [answers, setAnswers] = useState<Record<string, string>>({});
  if (!canWrite) return null;
  const path = { params: { path: { id: task.id } } };
  /** Runs a call answering the task, and shows the task it answered. */
  const act = (key: string, call: () => Promise<Task>) => run(key, async () => onChanged(await call()));
  const button = (key: string, label: string, call: () => Promise<Task>, className?: string) => (
    <span class="action" key={key}>
      <button type="button" class={className} disabled={busy !== null} onClick={() => void act(key, call)}>
        {label}
      </button>
      {problem(key)}
    </span>
  );

  const shown: (VNode | false)[] = [
    awaitsApproval(task) && <ApproveButton key="approve-task" task={task} onApproved={onChanged} />,
    ASSIGNABLE.includes(task.status) && (
      <form
        key="assign"
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void act("assign", () => ok(hub.POST("/api/v1/tasks/{id}/assign", { ...path, body: assignBodyOf(assignee) })));
        }}
      >
        <AssigneeSelect
          value={assignee}
          onChange={setAssignee}
          none="choose a session or server"
          servers={(matches ?? []).map((m) => ({ name: m.server_name, label: `${m.server_name} (score ${m.score})`, title: m.reasons.join("; ") }))}
          sessions={assignees?.sessions ?? []}
        />
        <button type="submit" disabled={!assignee}>
          Assign
        </button>
        {problem("assign")}
      </form>
    ),
    task.status === "pending" && !task.awaiting_approval && (
      <AutoAssign key="auto" task={task} matches={matches} onAssigned={async () => onChanged(await readTask(task.id))} />
    ),
    task.status === "plan_review" && button("approve", "Approve plan", () => ok(hub.POST("/api/v1/tasks/{id}/approve-plan", path))),
    task.status === "plan_review" && (
      <form
        key="revise"
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void act("revise", () => ok(hub.POST("/api/v1/tasks/{id}/revise-plan", { ...path, body: { feedback } })));
        }}
      >
        <label>
          Changes to ask for
          <input name="feedback" required value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
        </label>
        <button type="submit">Ask for changes</button>
        {problem("revise")}
      </form>
    ),
    ...interventions.map((i) => (
      <form
        class="intervention"
        key={i.id}
        onSubmit={(e) => {
          e.preventDefault();
          void run(`answer-${i.id}`, () =>
            ok(hub.POST("/api/v1/interventions/{id}/respond", { params: { path: { id: i.id } }, body: { response: answers[i.id] ?? "" } })),
          );
        }}
      >
        <p>
          <strong>{i.intervention_type}</strong> from {i.asked_by}: {i.question}
        </p>
        <label>
          Answer
          <input name="answer" required value={answers[i.id] ?? ""} onInput={(e) => setAnswers({ ...answers, [i.id]: e.currentTarget.value })} />
        </label>
        <button type="submit">Send answer</button>
        {problem(`answer-${i.id}`)}
      </form>
    )),
    task.status === "failed" && button("retry", "Retry", () => ok(hub.POST("/api/v1/tasks/{id}/retry", path))),
    !FINISHED.includes(task.status) && button("cancel", "Cancel task", () => ok(hub.DELETE("/api/v1/tasks/{id}", path)), "danger"),
  ];
  const actions = shown.filter((a): a is VNode => a !== false);
  if (actions.length === 0) return null;
  return (
    <div class="actions" role="group" aria-label="Actions">
      {actions}
    </div>
  );
}
