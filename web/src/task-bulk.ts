/**
 * One action over many tasks, each through the task's own route: a few requests at a time (a browser opens about six
 * connections to one host anyway), each item's outcome kept, so one refusal (a done task cannot be cancelled) neither
 * stops nor undoes the others.
 */
import { messageOf } from "./api";
import type { Task } from "./types";

const AT_ONCE = 6;

export interface ItemFailure {
  task: Task;
  message: string;
}
export interface BulkOutcome {
  done: Task[];
  failed: ItemFailure[];
}

export async function runOverTasks(tasks: Task[], act: (t: Task) => Promise<unknown>, atOnce = AT_ONCE): Promise<BulkOutcome> {
  const outcome: BulkOutcome = { done: [], failed: [] };
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++]!;
      try {
        await act(task);
        outcome.done.push(task);
      } catch (e) {
        outcome.failed.push({ task, message: messageOf(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, tasks.length) }, worker));
  return outcome;
}

const tasksWord = (n: number) => `${n} task${n === 1 ? "" : "s"}`;

/** One sentence for the toast: what was done, and each refusal with its reason (the first few, then how many more). */
export function summarise(outcome: BulkOutcome, verb: string, to = "", shownFailures = 3): string {
  const total = outcome.done.length + outcome.failed.length;
  if (outcome.failed.length === 0) return `${verb} ${tasksWord(total)}${to}.`;
  const listed = outcome.failed.slice(0, shownFailures).map((f) => `“${f.task.title}”: ${f.message}`);
  const more = outcome.failed.length - listed.length;
  return (
    `${verb} ${outcome.done.length} of ${tasksWord(total)}${to}; ${outcome.failed.length} failed: ${listed.join("; ")}` +
    (more > 0 ? `; and ${more} more.` : ".")
  );
}
