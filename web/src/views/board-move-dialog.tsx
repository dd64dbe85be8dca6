/**
 * Moving a card without dragging it (the keyboard's and a phone's way), and what a drop asks before it runs: the
 * changes to ask of a plan, the answers to a task's questions, or a confirmation before a cancel.
 */
import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../api";
import { ACTION_LABEL, labelOf, legalMoves, type BoardAction } from "../board-moves";
import type { Intervention, Task, TaskStatus } from "../types";
import { Dialog } from "../ui/dialog";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { openQuestions, runMove, type MoveInput } from "./board-move-run";

export type MoveStep = { to: TaskStatus } & BoardAction;

/** What the dialog shows: the list of moves ("Move to…"), or one move's question. */
export type MoveDialogState = { task: Task; step: MoveStep | null } | null;

export function MoveDialog({ state, onClose }: { state: MoveDialogState; onClose: () => void }) {
  const [step, setStep] = useState<MoveStep | null>(null);
  useEffect(() => setStep(state?.step ?? null), [state]);
  const task = state?.task;
  return (
    <Dialog open={!!state} title={task ? `Move “${task.title}”` : "Move"} onClose={onClose} class="move-dialog">
      {task && !step && <Choose task={task} onChoose={setStep} onDone={onClose} />}
      {task && step && <Ask task={task} step={step} onDone={onClose} />}
    </Dialog>
  );
}

/** Runs a move and tells the person how it went; a refusal stays in the dialog. */
function useRun(task: Task, onDone: () => void) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const run = async (action: BoardAction["action"], input?: MoveInput) => {
    setBusy(true);
    setProblem(null);
    try {
      toast(await runMove(task, action, input));
      onDone();
    } catch (e) {
      setProblem(e instanceof Error && !("status" in e) ? e.message : messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, run };
}

function Choose({ task, onChoose, onDone }: { task: Task; onChoose: (s: MoveStep) => void; onDone: () => void }) {
  const { busy, problem, run } = useRun(task, onDone);
  const moves = legalMoves(task);
  if (moves.length === 0) return <p>A {labelOf(task.status).toLowerCase()} task stays where it is: no one moves it from here.</p>;
  return (
    <div class="move-choices">
      <p class="muted">Now in {labelOf(task.status)}. Move it to:</p>
      <ul>
        {moves.map((m) => (
          <li key={m.to}>
            <button type="button" class="secondary" disabled={busy} onClick={() => ("asks" in m ? onChoose(m) : void run(m.action))}>
              <strong>{labelOf(m.to)}</strong> <span class="muted">{ACTION_LABEL[m.action]}</span>
            </button>
          </li>
        ))}
      </ul>
      <Problem message={problem} />
    </div>
  );
}

function Ask({ task, step, onDone }: { task: Task; step: MoveStep; onDone: () => void }) {
  const { busy, problem, run } = useRun(task, onDone);
  const [feedback, setFeedback] = useState("");
  const [questions, setQuestions] = useState<Intervention[] | null>(null);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [readProblem, setReadProblem] = useState<string | null>(null);
  useEffect(() => {
    if (step.action === "answer") void openQuestions(task.id).then(setQuestions, (e) => setReadProblem(messageOf(e)));
  }, [task.id, step.action]);
  const submit = (e: Event) => {
    e.preventDefault();
    if (step.action === "revise_plan") void run("revise_plan", { feedback });
    else if (step.action === "answer") void run("answer", { answers: (questions ?? []).map((q) => ({ id: q.id, response: answers[q.id] ?? "" })) });
    else void run(step.action);
  };
  return (
    <form class="move-ask" onSubmit={submit}>
      {step.action === "cancel" && <p>Cancel it? Its agent stops, and a cancelled task stays cancelled.</p>}
      {step.action === "revise_plan" && (
        <label>
          Changes to ask for
          <textarea name="feedback" required rows={3} value={feedback} onInput={(e) => setFeedback(e.currentTarget.value)} />
        </label>
      )}
      {step.action === "answer" && questions === null && !readProblem && <p class="loading">Reading its questions…</p>}
      {step.action === "answer" && questions?.length === 0 && <p>No question is waiting: the task goes back to running by itself.</p>}
      {step.action === "answer" &&
        questions?.map((q) => (
          <label key={q.id}>
            {q.question}
            <input name="answer" required value={answers[q.id] ?? ""} onInput={(e) => setAnswers({ ...answers, [q.id]: e.currentTarget.value })} />
          </label>
        ))}
      <Problem message={readProblem ?? problem} />
      <div class="dialog-actions">
        <button type="submit" class={step.action === "cancel" ? "danger" : undefined} disabled={busy || (step.action === "answer" && !questions?.length)}>
          {step.action === "cancel" ? "Cancel task" : `${ACTION_LABEL[step.action]} → ${labelOf(step.to)}`}
        </button>
      </div>
    </form>
  );
}
