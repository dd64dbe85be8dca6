/**
 * DataRef pointers (`{"$dataref": "<id>", …}`) in JSON: where they are, and whose DataRefs they name. A pointer is
 * read only in its own project. Written into a project's object (a task's result, payload, spec, plan, an
 * intervention's context, …) it must name a DataRef of that project: `pointerErrors` checks every pointer of a
 * written value in one query, for the Worker's writes (room/client.ts) and the agent socket's alike. A server
 * belongs to no project, so its fields take none (http/fields.ts). On the way out, an answer links only pointers to
 * DataRefs of the project of the object carrying them (`linkPointers`), so one stored before these rules, or
 * written around them, is never signed for anyone outside its project.
 */
import { sql, type AnyColumn, type SQL } from "drizzle-orm";
import { signBlobUrl } from "../auth/signed-url";
import type { ProjectRole } from "../auth/roles";
import type { Db } from "../db/client";
import { datarefs, projects } from "../db/schema";
import { onEveryShard, shardNames } from "../db/shards";
import type { Env } from "../runtime/env";
import type { FieldError } from "../protocol/field-errors";
import { isPlainObject } from "../domain/plain-object";

export type JsonPath = (string | number)[];

/** A pointer and where it is; `id` is null when `$dataref` is not a string (it then names no DataRef). */
export interface PointerAt {
  id: string | null;
  path: JsonPath;
}

interface Step {
  value: object;
  key: string | number | null;
  parent: Step | null;
}

const pathOf = (step: Step) => {
  const path: JsonPath = [];
  for (let at: Step | null = step; at?.parent; at = at.parent) path.unshift(at.key!);
  return path;
};

/**
 * Calls `found` for every pointer in a value, in document order; a pointer's own members are not looked into. It
 * walks with a stack of its own, not by recursion, so no nesting is too deep for it. The path is made only when asked.
 */
function eachPointer(value: unknown, found: (pointer: Record<string, unknown>, path: () => JsonPath) => void) {
  if (typeof value !== "object" || value === null) return;
  const stack: Step[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const step = stack.pop()!;
    const v = step.value as Record<string, unknown> | unknown[];
    if (!Array.isArray(v) && "$dataref" in v) {
      found(v, () => pathOf(step));
      continue;
    }
    const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = (v as Record<string | number, unknown>)[keys[i]!];
      if (typeof child === "object" && child !== null) stack.push({ value: child, key: keys[i]!, parent: step });
    }
  }
}

/** The DataRef ids a value points to. */
export function pointedTo(value: unknown): Set<string> {
  const ids = new Set<string>();
  eachPointer(value, (p) => typeof p.$dataref === "string" && ids.add(p.$dataref));
  return ids;
}

/** Every pointer in a value, with its path from the value. */
export function pointersIn(value: unknown): PointerAt[] {
  const found: PointerAt[] = [];
  eachPointer(value, (p, path) => found.push({ id: typeof p.$dataref === "string" ? p.$dataref : null, path: path() }));
  return found;
}

/** Who may see which project: the caller's membership of a DataRef's project as SQL, and the rule that decides with it. */
export interface Visibility {
  member: (projectIdColumn: AnyColumn) => SQL;
  sees: (projectId: string, membership: ProjectRole | null) => boolean;
}

/**
 * The project of each of these DataRefs that exists, in one query (none for no ids); with `visibility`, only those the
 * caller may see. With `everyShard`, `db` is the directory and each shard is asked (a DataRef lives on its project's).
 */
export async function datarefOwners(db: Db, ids: Iterable<string>, visibility?: Visibility, everyShard?: Env): Promise<Map<string, string>> {
  const list = [...ids];
  if (list.length === 0) return new Map();
  if (everyShard && shardNames(everyShard).length > 1) return ownersOnShards(everyShard, db, list, visibility);
  const member = visibility ? visibility.member(datarefs.projectId) : sql`NULL`;
  const rows = await db.all<{ id: string; project_id: string; member: ProjectRole | null }>(
    sql`SELECT id, project_id, ${member} AS member FROM datarefs WHERE id IN (SELECT value FROM json_each(${JSON.stringify(list)}))`,
  );
  const seen = visibility ? rows.filter((r) => visibility.sees(r.project_id, r.member)) : rows;
  return new Map(seen.map((r) => [r.id, r.project_id]));
}

/** datarefOwners over every shard at once, then the caller's memberships of their projects from the directory. */
async function ownersOnShards(env: Env, directory: Db, list: string[], visibility?: Visibility): Promise<Map<string, string>> {
  const answers = await onEveryShard(env, (d1) =>
    d1
      .prepare("SELECT id, project_id FROM datarefs WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(list))
      .all<{ id: string; project_id: string }>(),
  );
  const rows = answers.flatMap((a) => a.results);
  if (!visibility || rows.length === 0) return new Map(rows.map((r) => [r.id, r.project_id]));
  const projectIds = [...new Set(rows.map((r) => r.project_id))];
  const members = await directory.all<{ id: string; member: ProjectRole | null }>(
    sql`SELECT id, ${visibility.member(projects.id)} AS member FROM projects WHERE id IN (SELECT value FROM json_each(${JSON.stringify(projectIds)}))`,
  );
  const membership = new Map(members.map((m) => [m.id, m.member]));
  return new Map(
    rows.filter((r) => membership.has(r.project_id) && visibility.sees(r.project_id, membership.get(r.project_id)!)).map((r) => [r.id, r.project_id]),
  );
}

/** The same words for a DataRef of another project and for one that does not exist: the refusal tells neither apart. */
export const FOREIGN_POINTER = "must point to a DataRef of this project (no such DataRef here)";

/** Where a value written into a project points outside it (or nowhere), each named by its path under `prefix`. */
export async function pointerErrors(db: Db, projectId: string, value: unknown, prefix: JsonPath = [], everyShard?: Env): Promise<FieldError[]> {
  const pointers = pointersIn(value);
  if (pointers.length === 0) return [];
  const owners = await datarefOwners(
    db,
    pointers.flatMap((p) => (p.id === null ? [] : [p.id])),
    undefined,
    everyShard,
  );
  return pointers
    .filter((p) => p.id === null || owners.get(p.id) !== projectId)
    .map((p) => ({ path: [...prefix, ...p.path].join(".") || "(body)", message: FOREIGN_POINTER }));
}

/**
 * A copy of `value` in which every pointer to a DataRef of the project of the object carrying it has a fresh
 * download URL, and every other pointer none (a `url` it was written with is dropped). That project is `project`
 * when the whole value is one project's (a room's answer, a request about one task or project); otherwise the
 * `project_id` of the outermost object around the pointer that names one (a task, an event or an intervention of a
 * list). `owners`: the project of each DataRef that may be linked (datarefOwners).
 */
async function withDownloadUrls(env: Env, base: string, value: unknown, owners: ReadonlyMap<string, string>, project: string | null): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => withDownloadUrls(env, base, v, owners, project)));
  if (!isPlainObject(value)) return value;
  if ("$dataref" in value) {
    const { url: _url, expires_at: _expires, ...pointer } = value;
    const id = value.$dataref;
    if (typeof id !== "string" || project === null || owners.get(id) !== project) return pointer;
    return { ...pointer, ...(await signBlobUrl(env, base, { datarefId: id, method: "GET", size: Number(value.size) })) };
  }
  const here = project ?? (typeof value.project_id === "string" ? value.project_id : null);
  const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await withDownloadUrls(env, base, v, owners, here)] as const));
  return Object.fromEntries(entries);
}

/**
 * `value` with download URLs for the pointers it may link (see withDownloadUrls): one query when it points
 * anywhere, none otherwise. With `visibility`, only DataRefs of projects the caller may see are linked.
 */
export async function linkPointers(
  env: Env,
  db: Db,
  base: string,
  value: unknown,
  scope: { project: string | null; visibility?: Visibility; everyShard?: boolean },
): Promise<unknown> {
  const ids = pointedTo(value);
  if (ids.size === 0) return value;
  return withDownloadUrls(env, base, value, await datarefOwners(db, ids, scope.visibility, scope.everyShard ? env : undefined), scope.project);
}
