/** What the task routes of one surface (people's or agents') share: their router, guards and how they are described. */
import { Hono } from "hono";
import { agent, person, roomAgent } from "../middleware/guards";
import type { HubContext, HubEnv } from "../http/context";
import { documented, type Operation } from "../openapi/operation";

export const takenBack = "Refused with 403 `NOT_ALLOWED` when the caller is not the task's assignee; 409 `INVALID_TRANSITION` from any other status.";

/** The router and guards of one surface, and its description of an operation. */
export function taskSurface(surface: "people" | "agents") {
  const r = new Hono<HubEnv>();
  const people = surface === "people";
  const read = people ? person() : agent;
  // Every agent write here is made by a project's room, which refuses a revoked key itself.
  const write = people ? person("member") : roomAgent;
  const taskId = (c: HubContext) => c.req.param("id")!;
  /** This surface's description of an operation: agents' ids are prefixed (`agentStartTask`). */
  const describe = (op: Omit<Operation, "tag" | "caller">) =>
    documented({
      ...op,
      id: people ? op.id : `agent${op.id[0]!.toUpperCase()}${op.id.slice(1)}`,
      tag: people ? "Tasks" : "Agent tasks",
      caller: people ? "person" : "agent",
    });
  return { r, people, read, write, taskId, describe };
}

export type TaskSurface = ReturnType<typeof taskSurface>;
