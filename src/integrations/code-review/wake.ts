/**
 * How the room hands an attempt to its project's model reviewer. The namespace is reached by its method's shape,
 * not the class, whose module reaches the servers' links (and they the rooms' environment).
 */

/** An attempt a model reviews. */
export interface ReviewJob {
  projectId: string;
  taskId: string;
  attempt: number;
}

interface ModelReviewer {
  review(job: ReviewJob): Promise<void>;
}

export async function wakeModelReviewer(env: { CODE_REVIEWER: DurableObjectNamespace }, job: ReviewJob): Promise<void> {
  const reviewer = env.CODE_REVIEWER.get(env.CODE_REVIEWER.idFromName(job.projectId)) as unknown as ModelReviewer;
  await reviewer.review(job);
}
