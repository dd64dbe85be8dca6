/** Finding the template a chat's `/run` names, among the projects the person sees. Errors are plain text: each chat escapes them. */
import { and, sql } from "drizzle-orm";
import { templates, type TemplateRow } from "../../db/schema";
import { dbOf } from "../../db/client";
import { onEachShard, shardsOfProjects } from "../../db/shards";
import type { WorkerEnv } from "../../runtime/worker-env";
import type { RunRequest } from "./run-command";

type Project = { id: string; name: string; slug: string };

/** The one template of that name (case aside) in the person's projects, or what to tell them. */
export async function templateNamed(
  env: WorkerEnv,
  projects: readonly Project[],
  asked: RunRequest,
  /** The chat's command, for the hint when several projects have the template. */
  command = "/run",
): Promise<{ template: TemplateRow; project: Project } | { error: string }> {
  const wanted = asked.project?.toLowerCase();
  const within = wanted ? projects.filter((p) => p.slug.toLowerCase() === wanted || p.name.toLowerCase() === wanted) : projects;
  if (within.length === 0) return { error: "No project of yours has that name." };
  // Each project's templates live on its shard: the shards of these projects are asked at once.
  const shards = await shardsOfProjects(
    dbOf(env.DB),
    within.map((p) => p.id),
  );
  const answers = await onEachShard(env, shards, (db, ids) =>
    db
      .select()
      .from(templates)
      .where(
        and(
          sql`lower(${templates.name}) = lower(${asked.template})`,
          // One bound value however many projects the person sees (an admin sees them all).
          sql`${templates.projectId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
        ),
      ),
  );
  const results = answers.flat();
  if (results.length === 0) return { error: `No template named “${asked.template}” in your projects.` };
  if (results.length > 1) {
    const where = results.map((r) => projects.find((p) => p.id === r.projectId)!.slug);
    return {
      error: `Several projects have “${asked.template}”: ${command} <project>/<template> with one of ${where.join(", ")}.`,
    };
  }
  const template = results[0]!;
  return { template, project: projects.find((p) => p.id === template.projectId)! };
}
