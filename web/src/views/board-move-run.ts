/** A board move run through the API: the action the lifecycle names for it, with what the person gave (feedback, answers). */
import { hub, ok } from "../api";
import type { BoardAction } from "../board-moves";
import type { Intervention, Task } from "../types";

export interface MoveInput {
  feedback?: string;
  answers?: { id: string; response: string }[];
}

/** Runs the move; answers what to tell the person when it is done, or throws the hub's refusal. */
export async function runMove(task: Task, action: BoardAction["action"], input: MoveInput = {}): Promise<string> {
  const path = { params: { path: { id: task.id } } };
  const title = `“${task.title}”`;
  switch (action) {
    case "auto_assign": {
      const answer = await ok(hub.POST("/api/v1/tasks/{id}/auto-assign", path));
      if (answer.status === "no_match") throw new Error(`No server can take ${title} now: it stays pending.`);
      return `${title} assigned to ${answer.server_name}.`;
    }
    case "approve_plan":
      await ok(hub.POST("/api/v1/tasks/{id}/approve-plan", path));
      return `Plan of ${title} approved.`;
    case "revise_plan":
      await ok(hub.POST("/api/v1/tasks/{id}/revise-plan", { ...path, body: { feedback: input.feedback ?? "" } }));
      return `Changes asked of ${title}'s plan.`;
    case "answer":
      for (const a of input.answers ?? [])
        await ok(hub.POST("/api/v1/interventions/{id}/respond", { params: { path: { id: a.id } }, body: { response: a.response } }));
      return `Answered ${title}.`;
    case "retry":
      await ok(hub.POST("/api/v1/tasks/{id}/retry", path));
      return `${title} will run again.`;
    case "cancel":
      await ok(hub.DELETE("/api/v1/tasks/{id}", path));
      return `${title} cancelled.`;
  }
}

/** The questions a task in `needs_human` waits on. */
export const openQuestions = async (taskId: string): Promise<Intervention[]> =>
  ok(hub.GET("/api/v1/interventions", { params: { query: { task_id: taskId, status: "pending" } } }));
