/**
 * What a button on a chat message does (Telegram's callback data, Slack's action values): the kind of action and what
 * it acts on, in at most 64 bytes. `iv:<id>:<y|n|option>` answers a question, `it:<id>` opens a free-text answer
 * (Slack's modal), `ap:`, `pa:`, `pr:`, `rt:` approve a task, approve its plan, ask for changes, retry it.
 */
export type ButtonAction =
  | { kind: "answer_text"; interventionId: string }
  | { kind: "answer"; interventionId: string; choice: "y" | "n" | number }
  | { kind: "approve_task"; taskId: string }
  | { kind: "approve_plan"; taskId: string }
  | { kind: "revise_plan"; taskId: string }
  | { kind: "retry"; taskId: string };

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/** What a button on a task does, by the prefix of its callback data. */
const TASK_BUTTONS = { ap: "approve_task", pa: "approve_plan", pr: "revise_plan", rt: "retry" } as const;

export function parseButton(data: string): ButtonAction | null {
  const text = data.match(new RegExp(`^it:(${UUID})$`));
  if (text) return { kind: "answer_text", interventionId: text[1]! };
  const answer = data.match(new RegExp(`^iv:(${UUID}):(y|n|\\d)$`));
  if (answer) return { kind: "answer", interventionId: answer[1]!, choice: answer[2] === "y" || answer[2] === "n" ? answer[2] : Number(answer[2]) };
  const task = data.match(new RegExp(`^(ap|pa|pr|rt):(${UUID})$`));
  if (!task) return null;
  return { kind: TASK_BUTTONS[task[1] as keyof typeof TASK_BUTTONS], taskId: task[2]! };
}
