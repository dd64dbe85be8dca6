/**
 * A batch of usage points as the roll-ups it adds to: per task, per session, per day, model and agent, and in all.
 * The points' tasks are decided before (attributeUsage); no I/O here.
 */
import { addUsage, noUsage, type UsageAmounts, type UsagePoint } from "./usage";

/** A session's tasks as the batch read them: when each began and ended (null while under way). */
export interface SessionTask {
  taskId: string;
  sessionId: string;
  began: string;
  completedAt: string | null;
}

/**
 * The task a session was working on at `at`: the latest begun at or before it and not finished before it. A point
 * from before the session's first task, or between tasks, has none.
 */
export function taskAt(tasks: readonly SessionTask[], sessionId: string, at: string): string | null {
  let found: SessionTask | null = null;
  for (const t of tasks) {
    if (t.sessionId !== sessionId || t.began > at || (t.completedAt !== null && t.completedAt < at)) continue;
    if (!found || t.began > found.began) found = t;
  }
  return found?.taskId ?? null;
}

export interface DailyKey {
  day: string;
  model: string;
  serverId: string;
  agentType: string;
}

export interface UsageRollup {
  total: UsageAmounts;
  byTask: Map<string, UsageAmounts>;
  /** What sessions used while working on no task (a task's usage is on the task). */
  bySession: Map<string, UsageAmounts>;
  byDay: Map<string, { key: DailyKey; amounts: UsageAmounts }>;
  points: number;
  /** Points no task took: kept on their session (if any) and the project. */
  unattributed: number;
}

const amountsIn = <K>(map: Map<K, UsageAmounts>, key: K) => {
  let a = map.get(key);
  if (!a) map.set(key, (a = noUsage()));
  return a;
};

/** Adds up points, each with the task it was attributed to (or none). */
export function rollUp(points: readonly { point: UsagePoint; taskId: string | null }[]): UsageRollup {
  const rollup: UsageRollup = { total: noUsage(), byTask: new Map(), bySession: new Map(), byDay: new Map(), points: 0, unattributed: 0 };
  for (const { point, taskId } of points) {
    const amount = { [point.measure]: point.value };
    rollup.points++;
    addUsage(rollup.total, amount);
    if (taskId) addUsage(amountsIn(rollup.byTask, taskId), amount);
    else {
      rollup.unattributed++;
      if (point.sessionId) addUsage(amountsIn(rollup.bySession, point.sessionId), amount);
    }
    const key: DailyKey = { day: point.at.slice(0, 10), model: point.model ?? "", serverId: point.serverId ?? "", agentType: point.agentType ?? "" };
    const id = JSON.stringify([key.day, key.model, key.serverId, key.agentType]);
    const day = rollup.byDay.get(id) ?? { key, amounts: noUsage() };
    rollup.byDay.set(id, day);
    addUsage(day.amounts, amount);
  }
  return rollup;
}
