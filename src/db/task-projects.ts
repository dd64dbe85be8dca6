/**
 * Each task's project, remembered by this isolate. A task never moves to
 * another project, so a remembered answer cannot go stale; a task deleted
 * with its project is caught by whatever reads it next.
 */
const MAX_REMEMBERED = 50_000;
const projectOfTask = new Map<string, string>();

export const rememberedProjectOf = (taskId: string): string | undefined => projectOfTask.get(taskId);

export function rememberProjectOf(taskId: string, projectId: string) {
  if (projectOfTask.has(taskId)) return;
  // Forget the oldest first: Maps iterate in insertion order.
  if (projectOfTask.size >= MAX_REMEMBERED) projectOfTask.delete(projectOfTask.keys().next().value!);
  projectOfTask.set(taskId, projectId);
}
