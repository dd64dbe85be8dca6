/** Cycles in a project's dependency graph: edges point from a task to the task it depends on. */

export interface Edge {
  taskId: string;
  dependsOnTaskId: string;
}

/**
 * The cycle that adding `task → upstream` would close, as the path
 * [task, upstream, ..., task], or null when the edge is safe.
 */
export function cycleThrough(edges: readonly Edge[], taskId: string, upstreamId: string): string[] | null {
  if (taskId === upstreamId) return [taskId, taskId];
  const dependsOn = new Map<string, string[]>();
  for (const e of edges) dependsOn.set(e.taskId, [...(dependsOn.get(e.taskId) ?? []), e.dependsOnTaskId]);
  // Depth-first from the upstream: reaching the task again means a cycle.
  const parent = new Map<string, string>();
  const stack = [upstreamId];
  const seen = new Set([upstreamId]);
  while (stack.length) {
    const node = stack.pop()!;
    for (const next of dependsOn.get(node) ?? []) {
      if (next === taskId) {
        const path = [taskId];
        for (let at: string | undefined = node; at !== undefined; at = parent.get(at)) path.splice(1, 0, at);
        return [...path, taskId];
      }
      if (!seen.has(next)) {
        seen.add(next);
        parent.set(next, node);
        stack.push(next);
      }
    }
  }
  return null;
}
