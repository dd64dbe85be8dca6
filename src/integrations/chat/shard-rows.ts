/**
 * Reading a project's own rows (tasks, interventions…) for what a person does in chat. A project's rows live on its
 * shard (src/db/shards.ts homeD1): read there when the project is known; a row known by its id alone (a button's, a reply's)
 * is looked for on every shard at once, as the API's by-id reads do.
 */
import { onEveryShard } from "../../db/shards";
import type { Env } from "../../runtime/env";

/** The row `sql` (binding ?1 to `id`) finds on whichever shard holds it, or null. */
export async function rowById<T>(env: Env, sql: string, id: string): Promise<T | null> {
  const found = await onEveryShard(env, (d1) => d1.prepare(sql).bind(id).first<T>());
  return found.find((row) => row !== null) ?? null;
}

/** The rows `sql` (binding `params`) finds on every shard, together. */
export async function rowsOnEveryShard<T>(env: Env, sql: string, ...params: unknown[]): Promise<T[]> {
  return (
    await onEveryShard(
      env,
      async (d1) =>
        (
          await d1
            .prepare(sql)
            .bind(...params)
            .all<T>()
        ).results,
    )
  ).flat();
}
